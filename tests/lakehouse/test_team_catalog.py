"""The team setup: Iceberg's catalog in PostgreSQL (Iceberg's JDBC catalog behind Spark's session catalog), set in
the connection's config as a team would. Commands run as a user types them, each its own process and JVM: one
builds the project, a second reads the views, and PyIceberg reads the physical table from the same catalog
without Spark."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import psycopg2
import pytest

from tests.lakehouse.conftest import run_sparkmesh

pytestmark = [pytest.mark.lakehouse, pytest.mark.iceberg_only]

POSTGRES = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}


@pytest.fixture
def catalog_database():
    """A PostgreSQL database of its own for the Iceberg catalog, dropped afterwards."""
    name = f"iceberg_{uuid.uuid4().hex[:10]}"
    admin = psycopg2.connect(dbname="postgres", **POSTGRES)
    admin.autocommit = True
    admin.cursor().execute(f"CREATE DATABASE {name}")
    yield name
    admin.cursor().execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    admin.close()


def _project(root: Path, database: str) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "config.yaml").write_text(f"""gateways:
  local:
    connection:
      type: spark
      mode: local
      config:
        spark.jars.packages: org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0,org.postgresql:postgresql:42.7.14
        spark.sql.catalog.spark_catalog.type: jdbc
        spark.sql.catalog.spark_catalog.uri: jdbc:postgresql://127.0.0.1:5432/{database}
        spark.sql.catalog.spark_catalog.jdbc.user: postgres
        spark.sql.catalog.spark_catalog.jdbc.schema-version: V1
        spark.sql.catalog.spark_catalog.warehouse: {root / 'iceberg'}
model_defaults:
  dialect: spark
  start: '2024-01-01'
  table_format: iceberg
""")
    (root / "models" / "daily.sql").write_text(
        "MODEL (name team.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), end '2024-01-03');\n"
        "SELECT ds, COUNT(*) AS orders, SUM(id) AS total FROM (SELECT id, DATE '2024-01-01' + CAST(id % 3 AS INT) AS ds "
        "FROM range(30)) WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds"
    )
    return root


def test_the_catalog_in_postgres_is_shared_by_processes_and_read_by_pyiceberg(tmp_path, catalog_database):
    project = _project(tmp_path / "team", catalog_database)

    built = run_sparkmesh(project, "plan", "--auto-apply")
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    read = run_sparkmesh(project, "fetchdf", "--json", "SELECT ds, orders, total FROM team.daily ORDER BY ds")
    assert read.returncode == 0, read.stderr[-3000:]
    expected = [
        {"ds": "2024-01-01", "orders": 10, "total": 135},
        {"ds": "2024-01-02", "orders": 10, "total": 145},
        {"ds": "2024-01-03", "orders": 10, "total": 155},
    ]
    assert json.loads(read.stdout) == expected

    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog(
        "spark_catalog", uri=f"postgresql+psycopg2://postgres@127.0.0.1:5432/{catalog_database}",
        warehouse=str(project / "iceberg"),
    )
    tables = [name for _, name in catalog.list_tables("sparkmesh__team")]
    assert len(tables) == 1 and tables[0].startswith("team__daily__")
    rows = catalog.load_table(f"sparkmesh__team.{tables[0]}").scan().to_arrow().sort_by("ds").to_pylist()
    assert [(str(row["ds"]), row["orders"], row["total"]) for row in rows] == [
        (row["ds"], row["orders"], row["total"]) for row in expected
    ]
