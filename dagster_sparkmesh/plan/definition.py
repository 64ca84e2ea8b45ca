"""The Plan: a pure value describing how the project differs from an environment and what applying it takes.

Applying happens elsewhere (``execution``), in this order: push ``new_snapshots``, remove the ``restatements``
intervals, compute ``missing_intervals``, then promote ``environment_after`` with a compare-and-swap on
``previous_plan_id``.

Missing intervals are listed per unit interval for every model with a physical table. For incremental kinds
they are exactly what gets written. FULL, VIEW and SEED models are not incremental: any missing interval means
the executor rebuilds the whole table once, then records every listed interval.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from dagster_sparkmesh.plan.categorize import ColumnChange
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.snapshot.records import ChangeCategory, Environment, Interval, Snapshot


class DirectChange(Record):
    """A model whose own definition changed, compared with the environment's current snapshot."""

    name: str
    category: ChangeCategory
    diff: str
    """Unified diff of the pretty-printed SQL (or of the Python source / definition for other models)."""
    destructive: tuple[ColumnChange, ...] = ()
    """Columns a forward-only change drops or retypes (only computed for forward-only changes)."""


class Plan(Record):
    plan_id: str
    environment: str
    previous_plan_id: str | None
    """The plan id the environment had when this plan was built; promotion fails if it changed meanwhile."""
    base_environment: str
    """The environment compared with: the target itself, or the one it is created from when it is new."""
    is_new_environment: bool = False
    start: datetime
    end: datetime
    execution_time: datetime
    forward_only: bool = False
    effective_from: datetime | None = None
    """Forward-only models restate their intervals from this moment when the plan is applied to prod."""
    uncategorized: tuple[str, ...] = ()
    """Directly modified models whose change could not be categorized: ask the user (``categories=``)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    directly_modified: tuple[str, ...] = ()
    indirectly_modified: tuple[str, ...] = ()
    metadata_only: tuple[str, ...] = ()
    direct_changes: dict[str, DirectChange] = {}
    categories: dict[str, ChangeCategory] = {}
    """Change category of every added or modified model's snapshot (reused snapshots keep their own)."""

    new_snapshots: tuple[Snapshot, ...] = ()
    """Snapshots the state store does not hold yet (or holds with other metadata): push them before running."""
    environment_after: Environment
    missing_intervals: dict[str, tuple[Interval, ...]] = {}
    """Model name → unit intervals to compute for the version ``environment_after`` uses (empty ones omitted)."""
    previews: dict[str, Interval] = {}
    """Model name → preview range, for the models this development environment previews on tables of their own
    (forward-only changes and their descendants: ``plan.previews``); ``version_of`` gives the preview version."""
    restatements: dict[str, Interval] = {}
    """Model name → range whose recorded intervals are removed (then recomputed as missing)."""
    scheduled_restatements: dict[str, Interval] = {}
    """The models a run of prod restates because their ``auto_restatement_cron`` ticked (``plan.auto_restatements``),
    each over its own range; their readers follow in ``restatements``."""
    standalone_audits: tuple[str, ...] = ()
    """Standalone audits to run before the promotion: new or changed since the environment ran them, or reading a
    model this plan computes or restates (``plan.standalone_audits``)."""
    changed_audits: tuple[str, ...] = ()
    """Standalone audits added, changed or removed compared with the environment: a change to promote."""
    notes: tuple[str, ...] = ()
    """Things the user should know (skipped restatements, changed models held back by a selection)."""
    warnings: tuple[str, ...] = ()

    @property
    def has_changes(self) -> bool:
        """False means the project matches the environment: nothing to promote."""
        return self.is_new_environment or any(
            (self.added, self.removed, self.directly_modified, self.indirectly_modified, self.metadata_only,
             self.changed_audits)
        )

    @property
    def requires_backfill(self) -> bool:
        return bool(self.missing_intervals)

    @property
    def is_noop(self) -> bool:
        """Nothing to push, compute, restate or promote."""
        return not (self.has_changes or self.missing_intervals or self.restatements or self.new_snapshots)

    def tables(self, external_models: Iterable[str]) -> dict[str, str]:
        """Name → the table a reader uses: the physical tables of the environment's models (never views), and
        external models' own tables. The one place where a plan's names meet physical tables."""
        tables = {name: name for name in external_models}
        for snapshot in self.environment_after.snapshots:
            if snapshot.kind_type.has_physical_layer:
                tables[snapshot.name] = physical_table(snapshot.name, snapshot.version, snapshot.catalog)
        return tables

    def physical_table_of(self, model_name: str) -> str:
        """The physical table the plan writes ``model_name`` into."""
        snapshot = self.environment_after.snapshot_for(model_name)
        if snapshot is None:
            raise KeyError(model_name)
        return physical_table(snapshot.name, snapshot.version, snapshot.catalog)

    def version_of(self, model_name: str) -> str | None:
        snapshot = self.environment_after.snapshot_for(model_name)
        return snapshot.version if snapshot else None
