"""After a batch's rows are written: its post-statements, its audits, then the record of its intervals."""

from __future__ import annotations

from typing import Protocol

from dagster_sparkmesh.engine.counted_writes import RowChecks
from dagster_sparkmesh.errors import AuditFailure
from dagster_sparkmesh.execution.audits import run_audits
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.crashpoints import crashpoint
from dagster_sparkmesh.execution.model_target import ModelTarget, span_of
from dagster_sparkmesh.execution.results import AuditResult
from dagster_sparkmesh.execution.writes.queries import run_statements
from dagster_sparkmesh.execution.writes.records import Committed
from dagster_sparkmesh.plan.coverage import InputGap, complete_part, input_gaps, lookback_of
from dagster_sparkmesh.snapshot.records import Interval


def commit(
    ctx: ExecutionContext, target: ModelTarget, batch: tuple[Interval, ...],
    *, audit: bool = True, checks: RowChecks | None = None, staged: StagedWrite | None = None,
) -> Committed:
    """Run the post-statements, audit the freshly written batch, then record it. A failing post-statement or
    blocking audit leaves the batch unrecorded; ``audit=False``: a kept table, audited when it was written;
    ``checks``: the audits the write counted on the rows of the batch (``execution.row_checks``); ``staged``: the
    batch was written where readers do not see it (an Iceberg branch): the audits read it there, and it is
    published only once they passed.

    Only the intervals whose inputs were complete are recorded (``plan.coverage``); the others are returned as
    incomplete and stay missing, so the model is computed again once its parents have them."""
    run_statements(ctx, target, span_of(batch), target.model.post_statements)
    counted = checks.holding if checks else {}
    audited = staged.relation if staged is not None else target.table
    audits = (run_audits(ctx, target.model, audited, written=span_of(batch), counted=counted, table_for=target.table_lookup())
              if audit else [])
    failed = [audit for audit in audits if audit.blocking and not audit.passed]
    if failed:
        raise AuditFailure(
            f"{target.model.name}: blocking audit {failed[0].name} found {failed[0].failing_rows} offending row(s)",
            path=target.model.path,
            snippet=failed[0].query,
            hint="fix the model or its data; the interval stays missing and the environment is not promoted",
        ) from _AuditResults(audits)
    if staged is not None:
        staged.publish()
    crashpoint("before_record_interval")
    complete, lacking = complete_part(batch, missing_inputs(ctx, target), lookback_of(target.model))
    ctx.state.add_intervals(target.model.name, target.version, complete)
    return Committed(audits=tuple(audits), incomplete=tuple(lacking))


class StagedWrite(Protocol):
    """A batch written out of readers' sight (an Iceberg audit branch: ``execution.writes.lakehouse_table``)."""

    relation: str
    """Where the audits read the batch."""

    def publish(self) -> None:
        """Make the batch what readers see, in one commit."""


def missing_inputs(ctx: ExecutionContext, target: ModelTarget) -> list[InputGap]:
    """What the model's parents lack, in the versions the environment reads, as of now."""
    return input_gaps(ctx.project, target.model.name, target.versions.get, ctx.state, ctx.clock())


class _AuditResults(Exception):
    """Carries every audit result of a failed batch to whoever reports it (CLI, Dagster)."""

    def __init__(self, results: list[AuditResult]) -> None:
        super().__init__(f"{len(results)} audit result(s)")
        self.results = results


def audit_results_of(error: BaseException) -> list[AuditResult]:
    cause = error.__cause__
    return cause.results if isinstance(cause, _AuditResults) else []
