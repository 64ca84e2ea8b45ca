"""Helpers of the reliability suite: child processes, tiny projects on the shared Connect server, checksums.

Loaded by file path (pytest runs with --import-mode=importlib, so tests/ is no package).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

SPARKMESH = str(Path(sys.executable).parent / "sparkmesh")
CHILD_TIMEOUT_SECONDS = 240


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class ConnectServer:
    url: str
    folder: Path
    pid: int


def connect_config(url: str) -> str:
    """A project on the shared server, its tables in the format the suite's server serves (if any)."""
    table_format = os.environ.get("SPARKMESH_TEST_TABLE_FORMAT")
    format_line = f"\n          table_format: {table_format}" if table_format else ""
    return textwrap.dedent(
        f"""\
        model_defaults:
          dialect: spark
          start: '2024-01-01'
          cron: '@daily'{format_line}
        gateways:
          local:
            connection:
              mode: connect
              remote: {url}
        """
    )


def run_cli(project: Path, *args: str, env: dict[str, str] | None = None, timeout: float = CHILD_TIMEOUT_SECONDS):
    """``sparkmesh -p project args...`` in a child process (its own interpreter, its own Spark client)."""
    child_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **(env or {})}
    for name in ("SPARKMESH_CRASH_AT", "SPARKMESH_CRASH_DELAY"):
        if env is None or name not in env:
            child_env.pop(name, None)
    return subprocess.run(
        [SPARKMESH, "-p", str(project), *args],
        capture_output=True, text=True, env=child_env, timeout=timeout, cwd=project,
    )


CRASH_MODELS = {
    "events.sql": """
        MODEL (name {p}_raw.events, kind FULL);

        SELECT d.ds, i.id, i.id * 10 AS amount
        FROM (SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-02', INTERVAL 1 DAY)) AS ds) AS d
        CROSS JOIN (SELECT explode(sequence(1, 3)) AS id) AS i
        """,
    "daily.sql": """
        MODEL (
          name {p}_shop.daily,
          kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 1),
          grain ds,
          audits (not_null(columns := (ds, total)))
        );

        SELECT ds, SUM(amount) AS total, COUNT(*) AS orders
        FROM {p}_raw.events
        WHERE ds BETWEEN @start_ds AND @end_ds
        GROUP BY ds
        """,
    "big_days.sql": """
        MODEL (name {p}_shop.big_days);

        SELECT ds, total FROM {p}_shop.daily WHERE total > 0
        """,
}
CRASH_VIEWS = ("raw.events", "shop.daily", "shop.big_days")


def write_crash_project(folder: Path, prefix: str, url: str) -> Path:
    """Three models (FULL → daily incremental in 1-day batches → VIEW), schemas prefixed ``prefix_``."""
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text(connect_config(url))
    for file, text in CRASH_MODELS.items():
        (folder / "models" / file).write_text(textwrap.dedent(text).format(p=prefix))
    return folder


def view_checksums(engine, prefix: str, environment_schema_suffix: str = "") -> dict[str, tuple | None]:
    """Row count and an order-independent checksum of every column, per view; None for a missing view."""
    sums = {}
    for view in CRASH_VIEWS:
        schema, table = view.split(".")
        name = f"{prefix}_{schema}{environment_schema_suffix}.{table}"
        if not engine.catalog.view_exists(name):
            sums[view] = None
            continue
        sums[view] = tuple(
            engine.catalog.query_rows(f"SELECT COUNT(*), SUM(CAST(xxhash64(*) AS DECIMAL(38, 0))) FROM {name}")[0]
        )
    return sums


# -- Dagster range runs in child processes (test_concurrent_runs.py, test_dagster_crash.py) ----------------------

RANGE_CHILD = Path(__file__).with_name("range_run_child.py")
RANGE_DAYS = 9
"""The range projects' models cover Jan 1-9 2024; day k of January holds k orders."""
RANGE_MODELS = {
    "orders.sql": """
        MODEL (name {p}_src.orders, kind INCREMENTAL_BY_TIME_RANGE (time_column ds{batch}), end '2024-01-09', grain (ds, id));

        SELECT ds, id, id * 10 + dayofmonth(ds) AS amount
        FROM (
          SELECT ds, explode(sequence(1, dayofmonth(ds))) AS id
          FROM (SELECT explode(sequence(CAST(@start_ds AS DATE), CAST(@end_ds AS DATE), INTERVAL 1 DAY)) AS ds) AS days
        ) AS orders
        """,
    "enriched.sql": """
        MODEL (name {p}_shop.enriched, kind INCREMENTAL_BY_TIME_RANGE (time_column ds{batch}), end '2024-01-09');

        SELECT ds, id, amount * 2 AS amount2, amount % 3 AS bucket
        FROM {p}_src.orders
        WHERE ds BETWEEN @start_ds AND @end_ds
        """,
    "daily.sql": """
        MODEL (name {p}_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds{batch}), end '2024-01-09', grain ds);

        SELECT ds, COUNT(*) AS orders, SUM(amount2) AS total
        FROM {p}_shop.enriched
        WHERE ds BETWEEN @start_ds AND @end_ds
        GROUP BY ds
        """,
}
RANGE_MODEL_NAMES = ("src.orders", "shop.enriched", "shop.daily")
RANGE_SCHEMAS = ("src", "shop")


def range_model(prefix: str, name: str) -> str:
    return f"{prefix}_{name}"


def expected_rows_per_day(name: str) -> dict[str, int]:
    """What an exact run leaves per day: k orders (and enriched rows) on Jan k, one daily row per day."""
    return {f"2024-01-{day:02d}": 1 if name == "shop.daily" else day for day in range(1, RANGE_DAYS + 1)}


def write_range_project(folder: Path, prefix: str, url: str, batch_size: int | None = None) -> Path:
    """Three daily incremental models in a chain (orders → enriched → daily), schemas prefixed ``prefix_``."""
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text(connect_config(url))
    batch = f", batch_size {batch_size}" if batch_size else ""
    for file, text in RANGE_MODELS.items():
        (folder / "models" / file).write_text(textwrap.dedent(text).format(p=prefix, batch=batch))
    return folder


def dagster_home(folder: Path) -> Path:
    """A persistent Dagster instance (SQLite storage) shared by the children and the parent.

    Opened once here, so that its databases exist before the children start: Dagster's SQLite storage creates its
    tables on first open, and children opening a new instance at the same moment race (``table runs already exists``).
    """
    import dagster as dg

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    with dg.DagsterInstance.from_config(str(folder)):
        pass
    return folder


def start_range_run(
    project: Path, home: Path, *, first: str | None = None, last: str | None = None,
    state_url: str | None = None, env: dict[str, str] | None = None, resume: bool = False,
) -> subprocess.Popen:
    """A child process running one Dagster run of the model assets over [first, last] (or the promotion); with
    ``resume`` it computes only what the range still misses (a person's run restates what it holds)."""
    args = ["--range", first, last] if first and last else ["--promote"]
    args += ["--resume"] if resume else []
    if state_url:
        args += ["--state-url", state_url]
    child_env = {**os.environ, "DAGSTER_HOME": str(home), **(env or {})}
    for name in ("SPARKMESH_CRASH_AT", "SPARKMESH_CRASH_DELAY"):
        if env is None or name not in env:
            child_env.pop(name, None)
    return subprocess.Popen(
        [sys.executable, str(RANGE_CHILD), str(project), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env, cwd=project,
    )


@dataclass(frozen=True)
class ChildRun:
    code: int
    run_id: str | None
    output: str


def finish_range_run(process: subprocess.Popen, timeout: float = CHILD_TIMEOUT_SECONDS) -> ChildRun:
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
    run_id = None
    for line in stdout.splitlines():
        if line.startswith("{"):
            run_id = json.loads(line)["run_id"]
    return ChildRun(process.returncode, run_id, stdout + stderr)


def physical_tables_of(state, prefix: str) -> dict[str, str]:
    """Model (unprefixed) → its physical table, from the snapshots in the state store (one version each here)."""
    from dagster_sparkmesh.snapshot.naming import physical_table

    tables = {}
    for name in RANGE_MODEL_NAMES:
        versions = {s.version for s in state.get_snapshots_by_name([range_model(prefix, name)])}
        assert len(versions) == 1, f"{name}: versions {versions}"
        tables[name] = physical_table(range_model(prefix, name), versions.pop())
    return tables


def format_problems(engine, tables: list[str]) -> list[str]:
    """With ``SPARKMESH_TEST_TABLE_FORMAT`` set, the tables that are not tables of that format (the scenario would
    otherwise pass on the default layouts without anyone noticing)."""
    table_format = os.environ.get("SPARKMESH_TEST_TABLE_FORMAT")
    if not table_format:
        return []
    problems = []
    for table in tables:
        described = {row[0]: row[1] for row in engine.catalog.query_rows(f"DESCRIBE TABLE EXTENDED {table}")}
        if str(described.get("Provider", "")).lower() != table_format:
            problems.append(f"{table} is a {described.get('Provider')} table, not {table_format}")
    return problems


def rows_per_day(engine, table: str) -> dict[str, int]:
    return {str(day): count for day, count in engine.catalog.query_rows(f"SELECT ds, COUNT(*) FROM {table} GROUP BY ds")}


def checksum(engine, table: str) -> tuple:
    """Row count and an order-independent checksum over every column of a table or view."""
    return tuple(engine.catalog.query_rows(f"SELECT COUNT(*), SUM(CAST(xxhash64(*) AS DECIMAL(38, 0))) FROM {table}")[0])


def days_recorded(state, model: str, version: str) -> list[str]:
    days = []
    for interval in state.get_intervals(model, version):
        day = interval.start
        while day < interval.end:
            days.append(day.strftime("%Y-%m-%d"))
            day += timedelta(days=1)
    return days


def drop_range_schemas(engine, prefix: str) -> None:
    for schema in RANGE_SCHEMAS:
        engine.catalog.drop_schema(f"{prefix}_{schema}", cascade=True)
        engine.catalog.drop_schema(f"sparkmesh__{prefix}_{schema}", cascade=True)


POSTGRES_SERVER = "postgresql+psycopg2://postgres@127.0.0.1:5432"


@contextmanager
def fresh_postgres_database(name: str) -> Iterator[str]:
    """A PostgreSQL database of its own for one test (the state store's URL), dropped afterwards."""
    import sqlalchemy as sa

    admin = sa.create_engine(f"{POSTGRES_SERVER}/test", isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        yield f"{POSTGRES_SERVER}/{name}"
    finally:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()
