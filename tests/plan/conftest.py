"""Plan tests: a world whose plans are applied by the real executor (``real_world``), and an in-memory
``StateReader`` for the pure tests that fill a state by hand."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
import sqlglot

from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.snapshot.intervals import merge
from dagster_sparkmesh.snapshot.records import Environment, Interval, Snapshot, SnapshotId
from tests.plan.real_world import NOW, SOURCE_TABLES, World, create_sources, make_project

__all__ = ["NOW", "FakeState", "World", "make_model", "make_project"]


class FakeState:
    """Implements ``StateReader`` in memory, for tests that write what it holds by hand. It applies nothing: a
    test that applies a plan uses ``World``, whose intervals are the ones the executor records."""

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


def make_model(name: str, query: str, parents: Iterable[str] = (), **fields) -> Model:
    """A SQL model with its query canonicalized the way the loader does it."""
    fields.setdefault("kind", {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds"})
    fields.setdefault("start", "2024-01-01")
    canonical = sqlglot.parse_one(query, dialect="spark").sql(dialect="spark", comments=False, normalize=True)
    return Model(
        name=name, source="sql", path=Path(f"models/{name}.sql"), query=canonical,
        depends_on=frozenset(parents), **fields,
    )


@pytest.fixture(scope="module")
def plan_sources(spark):
    """The sources the plan tests read, created on the shared Spark session once per module and dropped after its
    last test. (Not "package": tests/plan is no package, so that scope would outlive it and leave the sources to the
    tests of other folders, which expect only the default database.)"""
    from dagster_sparkmesh.engine.adapter import SparkEngine

    engine = SparkEngine(spark)
    create_sources(engine)
    yield
    for schema in {name.split(".")[0] for name in SOURCE_TABLES}:
        engine.catalog.drop_schema(schema, cascade=True)


@pytest.fixture
def world(tmp_path, request) -> World:
    """Plans against a real SQLite state store in ``tmp_path``. Spark (the shared session, with the sources) is
    requested at the first apply only, so tests that only plan do without it; what the plans created in the catalog
    is dropped after the test."""

    def start_spark():
        request.getfixturevalue("plan_sources")
        return request.getfixturevalue("engine")

    world = World(tmp_path, start_spark)
    yield world
    world.close()


@pytest.fixture
def model():
    return make_model


@pytest.fixture
def project():
    return make_project
