"""Shared fixtures: ONE local Spark session (Hive catalog on Derby) for the whole test run.

A JVM holds one SparkContext and Derby one process, so every Spark test shares this session; isolate tests by
schema (``schema`` fixture) rather than by session.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from dagster_sparkmesh.project.config import SparkConnection

# The suite's projects run Spark in-process (one shared session), not on the managed server each would start for
# itself: set before any project loads, inherited by the CLI and Dagster processes tests start; a mode a test's
# config.yaml sets still wins. Tests of the default remove it (tests/engine/test_default_server.py).
os.environ.setdefault("SPARKMESH_SPARK_DEFAULT_MODE", "local")

TEST_SPARK = SparkConnection(mode="local", master="local[2]", config={"spark.sql.shuffle.partitions": "2"})


@pytest.fixture(scope="session")
def spark_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project folder whose ``.sparkmesh/`` holds the shared session's warehouse and metastore."""
    return tmp_path_factory.mktemp("spark_project")


@pytest.fixture(scope="session")
def spark_connection() -> SparkConnection:
    """The settings of the shared session (``open_session(spark_connection, spark_project)`` returns it)."""
    return TEST_SPARK


CONNECT_ENV = "SPARKMESH_TEST_ENGINE"
"""``connect``: the shared session is a Spark Connect client of a managed server the suite starts (what users get by
default), so a suite runs on the other engine: ``SPARKMESH_TEST_ENGINE=connect pytest tests/engine``."""


TABLE_FORMAT_ENV = "SPARKMESH_TEST_TABLE_FORMAT"
"""``iceberg`` or ``delta``: the shared session serves that lakehouse format (``engine.lakehouse``), for the tests
marked ``lakehouse``: ``SPARKMESH_TEST_TABLE_FORMAT=iceberg pytest -m lakehouse`` (``./dev test`` runs both)."""


@pytest.fixture(scope="session")
def served_table_format() -> str | None:
    return os.environ.get(TABLE_FORMAT_ENV) or None


@pytest.fixture(scope="session")
def spark(spark_project: Path, served_table_format: str | None):
    from dagster_sparkmesh.engine.session import close_sessions, open_session

    if os.environ.get(CONNECT_ENV) == "connect":
        yield from _connect_session(spark_project)
        return
    session = open_session(_served_connection(served_table_format), spark_project, served_table_format)
    yield session
    close_sessions()


SQLITE_JDBC_PACKAGE = "org.xerial:sqlite-jdbc:3.54.1.0"
"""SQLite's JDBC driver, for the Iceberg JDBC catalogs of tests that declare a catalog of their own."""


def _served_connection(served_table_format: str | None) -> SparkConnection:
    """The shared session's settings; serving Iceberg, the session can also open an Iceberg catalog in SQLite."""
    if served_table_format != "iceberg":
        return TEST_SPARK
    from dagster_sparkmesh.engine.lakehouse import ICEBERG_PACKAGE

    packages = {"spark.jars.packages": f"{ICEBERG_PACKAGE},{SQLITE_JDBC_PACKAGE}"}
    return TEST_SPARK.model_copy(update={"config": {**TEST_SPARK.config, **packages}})


def _connect_session(spark_project: Path):
    from dagster_sparkmesh.engine.connect_server import start_server, stop_server
    from dagster_sparkmesh.engine.session import close_sessions, open_session

    managed = SparkConnection(mode="managed", master="local[2]", config=TEST_SPARK.config)
    try:
        status = start_server(spark_project, managed)
        yield open_session(SparkConnection(mode="connect", remote=status.url), spark_project)
    finally:
        close_sessions()
        stop_server(spark_project)


@pytest.fixture
def engine(spark):
    from dagster_sparkmesh.engine.adapter import SparkEngine

    return SparkEngine(spark)


@pytest.fixture
def schema(engine) -> str:
    """A fresh schema for one test, dropped (with its tables) afterwards."""
    name = f"t_{uuid.uuid4().hex[:10]}"
    engine.catalog.create_schema(name)
    yield name
    engine.catalog.drop_schema(name, cascade=True)


@pytest.fixture
def clean_catalog(spark):
    """Each test starts and ends with only the default database: tests share one Spark session."""
    yield
    for (name,) in spark.sql("SHOW DATABASES").collect():
        if name != "default":
            spark.sql(f"DROP DATABASE IF EXISTS `{name}` CASCADE")


SIZE_ENV = "SPARKMESH_TEST_SIZE"
"""``ci`` in the suite CI runs (``./dev test``): a harness of many similar cases takes a slice of them; ``./dev test
--full``, or pytest run directly, takes them all."""


def harness_cases(cases, ci_share: int) -> list:
    """Every case, or in CI's run every ``ci_share``-th of them (the same ones each run: a failure reproduces)."""
    return list(cases)[::ci_share] if os.environ.get(SIZE_ENV) == "ci" else list(cases)


STATE_STORE_PARAMETERS = ("state_backend", "state")
"""The fixtures that run a test once per state store (SQLite, PostgreSQL)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a table-format lane a test parametrized over the state store runs on SQLite only (the others are
    deselected): the store and the table format never meet (intervals and leases in the store, rows in the format),
    and the main lane runs each such test on PostgreSQL and plain tables."""
    if not os.environ.get(TABLE_FORMAT_ENV):
        return
    on_postgres = [item for item in items if _runs_on_postgres(item)]
    if on_postgres:
        config.hook.pytest_deselected(items=on_postgres)
        items[:] = [item for item in items if item not in on_postgres]


def _runs_on_postgres(item: pytest.Item) -> bool:
    parameters = getattr(getattr(item, "callspec", None), "params", {})
    return any(parameters.get(name) == "postgres" for name in STATE_STORE_PARAMETERS)
