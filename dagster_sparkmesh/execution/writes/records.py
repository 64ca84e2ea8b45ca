"""What a write strategy returns, and the shape every strategy has."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.results import AuditResult
from dagster_sparkmesh.snapshot.records import Interval


@dataclass(frozen=True)
class Committed:
    """A written batch after its audits: what they found, and the intervals left missing because an input lacked
    data for them when the batch read it (``plan.coverage``)."""

    audits: tuple[AuditResult, ...] = ()
    incomplete: tuple[Interval, ...] = ()


@dataclass(frozen=True)
class WriteResult:
    """One model's write over its missing intervals."""

    rows: int = 0
    audits: tuple[AuditResult, ...] = ()
    """The audits of the last batch written (one result per audit: Dagster reports each audit once)."""
    incomplete: tuple[Interval, ...] = ()
    """Intervals computed but left missing: an input lacked data for them."""
    kept: bool = False
    """The table was kept as it was: its query and inputs had not changed since its last write."""
    warnings: tuple[str, ...] = ()
    """What the write went on despite (an SCD type 2 source repeating a key)."""

    @classmethod
    def of(cls, rows: int, committed: Committed, *, kept: bool = False, warning: str | None = None) -> WriteResult:
        return cls(rows=rows, audits=committed.audits, incomplete=committed.incomplete, kept=kept,
                   warnings=(warning,) if warning else ())


class WriteStrategy(Protocol):
    """How one model kind writes its missing intervals: idempotent per interval, data before the intervals'
    record (architecture invariants 3 and 4), so a failed attempt can simply be run again."""

    def __call__(self, ctx: ExecutionContext, target: ModelTarget) -> WriteResult: ...
