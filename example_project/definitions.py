"""Dagster entry point of the example shop (named in ../workspace.yaml; `./dev ui` serves it).

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
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.model.records import ExternalModel

PROJECT_DIR = Path(__file__).resolve().parent
EXTERNAL_DATA = PROJECT_DIR / "external_data"
CSV_SOURCES = {"raw.web_events": EXTERNAL_DATA}
"""External model → the folder of CSV files (with a header line) that holds its rows."""


def csv_table_ddl(external: ExternalModel, location: Path) -> str:
    """``CREATE TABLE IF NOT EXISTS`` of an external model over CSV files, typed by its declared columns."""
    columns = ", ".join(f"`{name}` {data_type}" for name, data_type in external.columns)
    return (
        f"CREATE TABLE IF NOT EXISTS {external.name} ({columns}) "
        f"USING csv OPTIONS (header 'true') LOCATION '{location.as_posix()}'"
    )


def register_csv_sources(engine, externals: dict[str, ExternalModel]) -> None:
    """Create the CSV tables that don't exist yet (idempotent; safe when several runs start at once)."""
    for name, location in CSV_SOURCES.items():
        if engine.table_exists(name):
            continue
        engine.create_schema(name.split(".")[0])
        try:
            engine.execute(csv_table_ddl(externals[name], location))
        except EngineError:
            # Two runs may both have seen no table: the loser's CREATE fails although the table is there.
            if not engine.table_exists(name):
                raise


class ExampleShopResource(SparkMeshResource):
    """The sparkmesh resource, plus the example's CSV sources created on the first Spark statement of a step."""

    def open_context(self, environment: str, project=None) -> ExecutionContext:
        ctx = super().open_context(environment, project)
        open_engine = ctx.engine_factory

        def engine_with_sources():
            engine = open_engine()
            register_csv_sources(engine, dict(ctx.project.external_models))
            return engine

        # Still lazy: a step that needs no Spark (nothing to compute) never starts it.
        ctx.engine_factory = engine_with_sources
        return ctx


defs = build_sparkmesh_definitions(
    PROJECT_DIR,
    resource=ExampleShopResource(project_dir=str(PROJECT_DIR), engine_mode="managed"),
)
