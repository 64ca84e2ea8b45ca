"""Snapshots, intervals and environments: the values the state store keeps and the plan compares."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import Enum

from dagster_sparkmesh.model.kinds import KindBase, kind_type
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import physical_table, view_name


class ChangeCategory(str, Enum):
    BREAKING = "breaking"
    NON_BREAKING = "non_breaking"
    FORWARD_ONLY = "forward_only"
    INDIRECT_BREAKING = "indirect_breaking"
    INDIRECT_NON_BREAKING = "indirect_non_breaking"
    METADATA = "metadata"
    UNCATEGORIZED = "uncategorized"
    """A direct change the categorizer could not judge: the user decides (breaking or non-breaking)."""

    @property
    def reuses_version(self) -> bool:
        """Whether a snapshot of this category keeps its predecessor's physical table and intervals."""
        return self in {
            ChangeCategory.FORWARD_ONLY,
            ChangeCategory.INDIRECT_NON_BREAKING,
            ChangeCategory.METADATA,
        }


class SnapshotId(Record):
    name: str
    fingerprint: str


class Interval(Record):
    """A half-open ``[start, end)`` time range (naive UTC datetimes)."""

    start: datetime
    end: datetime

    def __lt__(self, other: "Interval") -> bool:
        return (self.start, self.end) < (other.start, other.end)


IntervalsToCompute = Mapping[str, Sequence[Interval]]
"""Model name → the intervals a backfill computes (a plan's missing intervals, or one backfill stage's share)."""


class Snapshot(Record):
    name: str
    fingerprint: str
    metadata_hash: str
    version: str
    """Decides the physical table; shared by snapshots whose changes reuse their predecessor's data."""
    kind_name: str
    change_category: ChangeCategory | None = None
    parents: tuple[SnapshotId, ...] = ()
    previous_fingerprint: str | None = None
    catalog: str | None = None
    """The Spark catalog its objects live in (``Model.catalog``); None: the session's."""
    model_json: str
    """The Model record serialized with ``Model.model_dump_json()``: enough to render and run it later."""
    created_at: datetime

    @property
    def kind_type(self) -> type[KindBase]:
        return kind_type(self.kind_name)

    @property
    def id(self) -> SnapshotId:
        return SnapshotId(name=self.name, fingerprint=self.fingerprint)


class EnvironmentSnapshot(Record):
    """What an environment points at for one model."""

    name: str
    fingerprint: str
    version: str
    kind_name: str
    catalog: str | None = None
    """The Spark catalog of the model's objects (``Model.catalog``); None: the session's."""
    metadata_hash: str | None = None
    """The metadata this environment was promoted with (None: recorded before environments kept it). The snapshot
    record holds the latest metadata of its fingerprint, which another environment's plan may have changed."""
    promoted: bool = True
    """Whether the environment has a view of this model. A development environment without ``include_unmodified``
    has views of its changed models only; the others are there for its queries to read (recorded before: True)."""

    @property
    def kind_type(self) -> type[KindBase]:
        return kind_type(self.kind_name)


class Environment(Record):
    name: str
    plan_id: str
    previous_plan_id: str | None = None
    snapshots: tuple[EnvironmentSnapshot, ...] = ()
    start: datetime
    end: datetime | None = None
    expires_at: datetime | None = None
    promoted_at: datetime
    preview_start: datetime | None = None
    """Where this development environment's forward-only previews start (``plan.previews``); None without any.
    Re-planning the environment as it is (``run``, ``check-intervals``) keeps previewing from there."""
    standalone_audits: dict[str, str] = {}
    """Standalone audit name → the fingerprint it passed (or only warned) with before this promotion."""

    def snapshot_for(self, model_name: str) -> EnvironmentSnapshot | None:
        return next((s for s in self.snapshots if s.name == model_name), None)

    @property
    def view_snapshots(self) -> tuple[EnvironmentSnapshot, ...]:
        """The snapshots the environment has views of: promoted ones of models with a physical layer."""
        return tuple(s for s in self.snapshots if s.promoted and s.kind_type.has_physical_layer)

    def relation_of(self, model_name: str) -> str:
        """What reads ``model_name`` as this environment sees it: its view, or for a model the environment has no
        view of (a development environment's unchanged model) the physical table of its snapshot."""
        snapshot = self.snapshot_for(model_name)
        if snapshot is not None and not snapshot.promoted:
            return physical_table(snapshot.name, snapshot.version, snapshot.catalog)
        return view_name(model_name, self.name, snapshot.catalog if snapshot is not None else None)
