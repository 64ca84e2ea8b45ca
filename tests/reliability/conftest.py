"""Fixtures of the reliability suite: one managed Spark Connect server for every test that kills or spawns
processes (the parent and its children then share one catalog).

Each scenario gets its own project folder (its own SQLite state) and its own schema prefix, so the scenarios
share the server without sharing a table. With ``SPARKMESH_TEST_TABLE_FORMAT`` set, the server serves that lakehouse
format and the projects ask for it (``harness.connect_config``): the same scenarios on Iceberg or Delta tables.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from dagster_sparkmesh.project.config import SparkConnection


def load_harness():
    if "reliability_harness" not in sys.modules:
        spec = importlib.util.spec_from_file_location("reliability_harness", Path(__file__).with_name("harness.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules["reliability_harness"] = module
        spec.loader.exec_module(module)
    return sys.modules["reliability_harness"]


harness = load_harness()


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory, spark, served_table_format):
    """The shared Connect server of the suite, always stopped (by the pid it recorded) at the end.

    ``spark`` first: once a process holds a Spark Connect session, pyspark builds no classic one, so the shared
    in-process session must exist before, whatever order the tests are selected in."""
    from dagster_sparkmesh.engine.connect_server import start_server, stop_server
    from dagster_sparkmesh.engine.lakehouse import with_lakehouse
    from dagster_sparkmesh.engine.session import close_sessions

    folder = tmp_path_factory.mktemp("reliability_server")
    config = with_lakehouse({"spark.sql.shuffle.partitions": "2"}, served_table_format)
    connection = SparkConnection(mode="managed", master="local[2]", connect_port=harness.free_port(), config=config)
    try:
        status = start_server(folder, connection)
        yield harness.ConnectServer(url=status.url or "", folder=folder, pid=status.pid or 0)
    finally:
        close_sessions(folder)
        stop_server(folder)


@pytest.fixture(scope="session")
def remote_engine(connect_server):
    """The parent's own client of the shared server, to inspect what the children left behind."""
    from dagster_sparkmesh.engine.adapter import SparkEngine
    from dagster_sparkmesh.engine.session import open_session

    connection = SparkConnection(mode="connect", remote=connect_server.url)
    return SparkEngine(open_session(connection, connect_server.folder))


