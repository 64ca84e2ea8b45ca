"""Plan tests: an in-memory StateReader (a test double for the protocol) and a tiny apply loop around it."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import pytest
import sqlglot

from dagster_sparkmesh.model.records import ExternalModel, Model
from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.project.config import ModelDefaults, ProjectConfig
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.fingerprint import chain_fingerprints
from dagster_sparkmesh.snapshot.intervals import merge, remove_range
from dagster_sparkmesh.snapshot.records import Environment, Interval, Snapshot, SnapshotId

NOW = datetime(2024, 1, 10, 6, 30)


class FakeState:
    """Implements ``StateReader`` in memory, plus the few writes applying a plan needs."""

    def __init__(self) -> None:
        self.environments: dict[str, Environment] = {}
        self.snapshots: dict[SnapshotId, Snapshot] = {}
        self.intervals: dict[tuple[str, str], list[Interval]] = {}

    def get_environment(self, name: str) -> Environment | None:
        return self.environments.get(name)

    def get_snapshots(self, ids: Iterable[SnapshotId]) -> dict[SnapshotId, Snapshot]:
        return {i: self.snapshots[i] for i in ids if i in self.snapshots}

    def get_snapshots_by_name(self, names: Iterable[str]) -> list[Snapshot]:
        wanted = set(names)
        return sorted((s for s in self.snapshots.values() if s.name in wanted), key=lambda s: s.created_at)

    def get_intervals(self, name: str, version: str) -> list[Interval]:
        return merge(self.intervals.get((name, version), []))

    def apply(self, plan: Plan) -> None:
        """What the executor does, minus the data: push, restate, record every missing interval, promote."""
        for snapshot in plan.new_snapshots:
            self.snapshots[snapshot.id] = snapshot
        for name, interval in plan.restatements.items():
            key = (name, plan.version_of(name))
            self.intervals[key] = remove_range(self.intervals.get(key, []), interval)
        for name, intervals in plan.missing_intervals.items():
            key = (name, plan.version_of(name))
            self.intervals[key] = merge(self.intervals.get(key, []) + list(intervals))
        self.environments[plan.environment] = plan.environment_after


def make_model(name: str, query: str, parents: Iterable[str] = (), **fields) -> Model:
    """A SQL model with its query canonicalized the way the loader does it."""
    fields.setdefault("kind", {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds"})
    fields.setdefault("start", "2024-01-01")
    canonical = sqlglot.parse_one(query, dialect="spark").sql(dialect="spark", comments=False, normalize=True)
    return Model(
        name=name, source="sql", path=Path(f"models/{name}.sql"), query=canonical,
        depends_on=frozenset(parents), **fields,
    )


def make_project(*models: Model, start: str | None = None) -> Project:
    """A project of ``models``; parents that are not models become external models."""
    names = {m.name for m in models}
    externals = {
        name: ExternalModel(name=name, path=Path("external_models.yaml"))
        for m in models for name in m.depends_on if name not in names
    }
    config = ProjectConfig(model_defaults=ModelDefaults(start=start))
    return Project(
        path=Path("."), config=config, models=chain_fingerprints({m.name: m for m in models}, externals),
        external_models=externals,
    )


class World:
    """A project evolving against one fake state store."""

    def __init__(self) -> None:
        self.state = FakeState()

    def plan(self, *models: Model, environment: str = "prod", **options) -> Plan:
        options.setdefault("execution_time", NOW)
        return build_plan(make_project(*models), self.state, environment, **options)

    def apply(self, *models: Model, environment: str = "prod", **options) -> Plan:
        plan = self.plan(*models, environment=environment, **options)
        self.state.apply(plan)
        return plan


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def model():
    return make_model


@pytest.fixture
def project():
    return make_project
