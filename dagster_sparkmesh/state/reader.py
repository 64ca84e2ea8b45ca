"""The read-only interface the planner needs; the SQLAlchemy store implements it, tests may use a fake."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from dagster_sparkmesh.snapshot.records import Environment, Interval, Snapshot, SnapshotId


class StateReader(Protocol):
    def get_environment(self, name: str) -> Environment | None: ...

    def get_snapshots(self, ids: Iterable[SnapshotId]) -> dict[SnapshotId, Snapshot]: ...

    def get_snapshots_by_name(self, names: Iterable[str]) -> list[Snapshot]:
        """Every stored snapshot of these models, oldest first (to find the version a change may reuse)."""
        ...

    def get_intervals(self, name: str, version: str) -> list[Interval]:
        """Recorded complete intervals of (model, version), merged and sorted."""
        ...
