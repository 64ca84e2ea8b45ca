"""Records that execution steps return to the CLI and to Dagster."""

from __future__ import annotations

from datetime import datetime

from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.records import Interval


class AuditResult(Record):
    name: str
    blocking: bool
    failing_rows: int
    sample: tuple[tuple[str, ...], ...] = ()
    """Up to five offending rows (an AUDIT_ONLY model's ``max_failing_rows``), rendered as text."""
    query: str

    @property
    def passed(self) -> bool:
        return self.failing_rows == 0


class ModelRunResult(Record):
    model: str
    version: str
    physical_table: str | None
    intervals: tuple[Interval, ...] = ()
    """The intervals computed in this run (empty when skipped)."""
    rows_written: int = 0
    duration_seconds: float = 0.0
    skipped: bool = False
    """True when the version's intervals were already complete: nothing was recomputed."""
    kept: bool = False
    """True when a FULL model's table was kept as it was: its query and inputs had not changed since its last
    write (``execution.unchanged_inputs``). No rows written, no audits run; its intervals are recorded."""
    audits: tuple[AuditResult, ...] = ()
    incomplete: tuple[Interval, ...] = ()
    """Intervals computed but not recorded complete: a parent lacked data for them when this model read it
    (``plan.coverage``). They stay missing, so the model is computed again once its parents have them."""

    not_ready: tuple[tuple[Interval, str], ...] = ()
    """Missing intervals a signal held back (interval, the signal's name): not computed, still missing."""
    warnings: tuple[str, ...] = ()
    """What the write went on despite, for a person to read (an SCD type 2 source repeating a key)."""

    @property
    def range(self) -> Interval | None:
        if not self.intervals:
            return None
        return Interval(start=min(i.start for i in self.intervals), end=max(i.end for i in self.intervals))

    @property
    def failed_blocking_audits(self) -> tuple[AuditResult, ...]:
        return tuple(a for a in self.audits if a.blocking and not a.passed)


class ViewChange(Record):
    model: str
    view: str
    target: str
    action: str
    """"create", "alter" or "drop"."""


class PromotionResult(Record):
    environment: str
    plan_id: str
    previous_plan_id: str | None
    views: tuple[ViewChange, ...]
    snapshots: tuple[str, ...]
    """``name@version`` of every model the environment now points at."""
    promoted_at: datetime
    summary: str
