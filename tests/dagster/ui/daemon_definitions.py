"""Definitions for the in-process backfill daemon test (``test_backfill_daemon.py``).

The daemon loads this file as a code location and the synchronous run launcher re-imports it for every run, so
the project folder and the shared test session's warehouse come in through the environment, not arguments.
Runs execute in-process, on the test session: a JVM holds one local SparkContext.
"""

from __future__ import annotations

import os

import dagster as dg

from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_definitions

PROJECT_ENV = "SPARKMESH_DAEMON_TEST_PROJECT"
WAREHOUSE_ENV = "SPARKMESH_DAEMON_TEST_WAREHOUSE"

_project = os.environ[PROJECT_ENV]
_resource = SparkMeshResource(project_dir=_project, spark_config={"spark.sql.warehouse.dir": os.environ[WAREHOUSE_ENV]})

defs = dg.Definitions.merge(
    build_sparkmesh_definitions(_project, resource=_resource, sensor=False),
    dg.Definitions(executor=dg.in_process_executor),
)
