"""Dagster entry point of the example shop in Python (named in ../workspace.yaml; `./dev ui` serves it). The same
definitions load through the Dagster Component in ``shop_dagster/defs/shop/defs.yaml`` (location
``example_shop_component``).

It lives beside the project, outside `models/`, so neither dagster-sparkmesh nor SQLMesh reads it as a model.

Two choices make the example work from the UI with no manual step:
- The engine mode is ``managed``: every run process (and every step of Dagster's multiprocess executor) connects
  to one Spark Connect server that sparkmesh starts for the project, so concurrent runs of a backfill share one
  catalog (embedded Derby admits a single JVM, so per-process local sessions would lock each other out).
- ``raw.web_events`` is an external model: the project reads it but never builds it. Here it is a CSV table over
  ``external_data/``, registered by the resource the first time a step opens Spark, before any model reads it.
"""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_definitions

PROJECT_DIR = Path(__file__).resolve().parent

defs = build_sparkmesh_definitions(
    PROJECT_DIR,
    resource=SparkMeshResource(
        project_dir=str(PROJECT_DIR), engine_mode="managed", csv_sources={"raw.web_events": "external_data"}
    ),
)
