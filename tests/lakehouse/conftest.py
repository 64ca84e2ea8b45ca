"""Fixtures of the lakehouse tests: a project whose tables are in the format the shared session serves
(``SPARKMESH_TEST_TABLE_FORMAT``), built in-process on that session, and readers of its tables outside Spark."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.state.store import open_state_store

EXECUTION_TIME = datetime(2024, 1, 6)
SOURCE = "lh_src.events"


@pytest.fixture(scope="session")
def table_format(served_table_format: str | None) -> str:
    if served_table_format not in ("iceberg", "delta"):
        pytest.fail("the lakehouse tests need a session serving a format: SPARKMESH_TEST_TABLE_FORMAT=iceberg (or "
                    "delta) pytest -m lakehouse; `./dev test` runs them once per format")
    return served_table_format


@pytest.fixture
def lakehouse_project(tmp_path: Path, table_format: str, clean_catalog, spark) -> Path:
    """Three models in ``table_format`` over an external table of five days, beside a seed and a VIEW model (kinds
    that keep the default layouts)."""
    spark.sql("CREATE DATABASE IF NOT EXISTS lh_src")
    spark.sql(
        f"CREATE TABLE {SOURCE} USING parquet AS SELECT id, DATE '2024-01-01' + CAST(id % 5 AS INT) AS ds, "
        "TIMESTAMP '2024-01-01 03:00:00' + make_interval(0, 0, 0, CAST(id % 5 AS INT), 0) AS ts, id * 10 AS amount "
        "FROM range(40)"
    )
    project = tmp_path / "lakehouse"
    (project / "models").mkdir(parents=True)
    (project / "seeds").mkdir()
    (project / "config.yaml").write_text(
        f"model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  table_format: {table_format}\n"
    )
    (project / "external_models.yaml").write_text(
        f"- name: {SOURCE}\n  columns: {{id: bigint, ds: date, ts: timestamp, amount: bigint}}\n"
    )
    models = {
        "daily.sql": "MODEL (name lhm.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), "
        "audits (not_null(columns := (ds)), accepted_range(column := total, min_v := 0)));\n"
        f"SELECT ds, COUNT(*) AS orders, SUM(amount) AS total FROM {SOURCE} "
        "WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds",
        "events.sql": "MODEL (name lhm.events, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), "
        "partitioned_by (kind));\n"
        f"SELECT id, ts, amount, IF(id % 2 = 0, 'even', 'odd') AS kind FROM {SOURCE} "
        "WHERE ts BETWEEN @start_ts AND @end_ts",
        "totals.sql": "MODEL (name lhm.totals, kind FULL);\n"
        "SELECT COUNT(*) AS days, SUM(total) AS total FROM lhm.daily",
        "regions.sql": "MODEL (name lhm.regions, kind SEED (path '../seeds/regions.csv'));",
        "report.sql": "MODEL (name lhm.report, kind VIEW);\nSELECT t.total, r.name FROM lhm.totals AS t CROSS JOIN lhm.regions AS r",
    }
    for name, text in models.items():
        (project / "models" / name).write_text(text)
    (project / "seeds" / "regions.csv").write_text("name\nnorth\nsouth\n")
    return project


def format_project(
    spark, folder: Path, table_format: str, source: tuple[str, str, str], models: dict[str, str]
) -> Path:
    """A project of ``models`` (file name → text) in ``table_format`` over one external table, created first:
    ``source`` is (name, its CREATE TABLE's query, its columns as external_models.yaml writes them)."""
    name, query, columns = source
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {name.split('.')[0]}")
    spark.sql(f"CREATE TABLE {name} USING parquet AS {query}")
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text(
        f"model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  table_format: {table_format}\n"
    )
    (folder / "external_models.yaml").write_text(f"- name: {name}\n  columns: {{{columns}}}\n")
    for file, text in models.items():
        (folder / "models" / file).write_text(text)
    return folder


@pytest.fixture
def make_context(engine):
    stores = []

    def make(project_dir: Path, environment: str = "prod", clock: datetime = EXECUTION_TIME) -> ExecutionContext:
        store = open_state_store(None, project_dir)
        stores.append(store)
        return ExecutionContext(
            project=load_project(project_dir, use_cache=False), state=store, environment=environment,
            engine_factory=lambda: engine, clock=lambda: clock,
        )

    yield make
    for store in stores:
        store.close()


SPARKMESH = Path(sys.executable).parent / "sparkmesh"


def run_sparkmesh(project: Path, *args: str) -> subprocess.CompletedProcess:
    """A ``sparkmesh`` command as a user types it: its own process and JVM, the project's own session settings (not
    the suite's format)."""
    environment = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    environment.pop("SPARKMESH_TEST_TABLE_FORMAT", None)
    return subprocess.run([str(SPARKMESH), "-p", str(project), *args], capture_output=True, text=True,
                          env=environment, timeout=900)

