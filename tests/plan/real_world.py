"""The plan tests' world: plans built against the real SQLite state store and applied by the real executor.

Applying a plan runs ``apply_plan`` (what ``sparkmesh plan --auto-apply`` runs) on the suite's shared Spark session,
so the intervals a later plan sees are the ones the executor really recorded: a model computed from a parent that
lacked a day leaves that day missing, as SQLMesh does. The external models the tests' queries read are real tables
(``SOURCE_TABLES``: ``SOURCE_COLUMNS``, a row per day), created once per test module (``create_sources``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from dagster_sparkmesh.execution.apply import ApplyResult, apply_plan
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.model.records import ExternalModel, Model
from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.project.config import ModelDefaults, ProjectConfig
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.fingerprint import chain_fingerprints
from dagster_sparkmesh.state.store import StateStore, open_state_store

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine

NOW = datetime(2024, 1, 10, 6, 30)
"""The plans' default execution time: 2024-01-09 is the last complete day."""

SOURCE_TABLES = ("src.events", "src.e")
"""The external models the plan tests read."""
SOURCE_COLUMNS = "id INT, ds DATE, region STRING, name STRING, updated_at TIMESTAMP"
"""Every column the plan tests' queries read from an external model."""
SOURCE_DAYS = (date(2023, 11, 1), date(2024, 1, 12))
"""The sources hold one row per day over this range (both ends included): every window the tests plan over."""


def make_project(*models: Model, start: str | None = None, path: Path = Path(".")) -> Project:
    """A project of ``models``; parents that are not models become external models."""
    names = {m.name for m in models}
    externals = {
        name: ExternalModel(name=name, path=Path("external_models.yaml"))
        for m in models for name in m.depends_on if name not in names
    }
    config = ProjectConfig(model_defaults=ModelDefaults(start=start))
    return Project(
        path=path, config=config, models=chain_fingerprints({m.name: m for m in models}, externals),
        external_models=externals,
    )


class World:
    """A project evolving against one real state store; Spark starts (``start_spark``) at the first apply only, so
    tests that only plan run without it."""

    def __init__(self, path: Path, start_spark: Callable[[], SparkEngine]) -> None:
        self.path = path
        self._start_spark = start_spark
        self._engine: SparkEngine | None = None
        self.now = NOW
        self.state: StateStore = open_state_store(None, path, clock=lambda: self.now)
        self.results: list[ApplyResult] = []
        """What each apply computed, in order: the executor's own account."""

    def project(self, *models: Model) -> Project:
        return make_project(*models, path=self.path)

    def plan(self, *models: Model, environment: str = "prod", **options) -> Plan:
        options.setdefault("execution_time", NOW)
        return build_plan(self.project(*models), self.state, environment, **options)

    def apply(self, *models: Model, environment: str = "prod", **options) -> Plan:
        """Build the plan of ``models`` and apply it as ``sparkmesh plan --auto-apply`` does; returns the plan."""
        project = self.project(*models)
        options.setdefault("execution_time", NOW)
        plan = build_plan(project, self.state, environment, **options)
        self.now = options["execution_time"]  # the executor's clock is the plan's: gaps are judged at that time
        unknown = project.external_models.keys() - set(SOURCE_TABLES)
        assert not unknown, f"the plan tests' sources are {SOURCE_TABLES}, not {sorted(unknown)}"
        engine = self._spark()
        context = ExecutionContext(
            project=project, state=self.state, environment=environment, engine_factory=lambda: engine,
            clock=lambda: self.now,
        )
        self.results.append(apply_plan(context, plan))
        return plan

    def spark_rows(self, sql: str) -> list[tuple]:
        """The rows of a query on the shared session: what the applied plans wrote."""
        return self._spark().catalog.query_rows(sql)

    def close(self) -> None:
        """Close the state store, and drop what the plans created in the catalog (the sources stay)."""
        self.state.close()
        if self._engine is not None:
            drop_all_but_sources(self._engine)

    def _spark(self) -> SparkEngine:
        if self._engine is None:
            self._engine = self._start_spark()
        return self._engine


def create_sources(engine: SparkEngine) -> None:
    """Each of ``SOURCE_TABLES`` as a table of ``SOURCE_COLUMNS``, one row per day of ``SOURCE_DAYS``: id n on the
    n-th day, in region north or south by turns."""
    first, last = SOURCE_DAYS
    rows = ", ".join(
        f"({n}, DATE'{day}', '{('north', 'south')[n % 2]}', 'name {n}', TIMESTAMP'{day} 12:00:00')"
        for n, day in enumerate(_days(first, last), start=1)
    )
    for name in SOURCE_TABLES:
        engine.catalog.create_schema(name.split(".")[0])
        engine.catalog.execute(f"DROP TABLE IF EXISTS {name}")
        engine.catalog.execute(f"CREATE TABLE {name} ({SOURCE_COLUMNS}) USING parquet")
        engine.catalog.execute(f"INSERT INTO {name} VALUES {rows}")


def drop_all_but_sources(engine: SparkEngine) -> None:
    """Every schema a test's plans created (physical tables, views, environments); the sources stay."""
    keep = {"default", *(name.split(".")[0] for name in SOURCE_TABLES)}
    for (schema,) in engine.catalog.query_rows("SHOW DATABASES"):
        if schema not in keep:
            engine.catalog.drop_schema(schema, cascade=True)


def _days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]
