"""INCREMENTAL_BY_TIME_RANGE: batches of missing intervals, each overwriting exactly its time window."""

from __future__ import annotations

from dataclasses import dataclass

from dagster_sparkmesh.engine.counted_writes import RowChecks
from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.layouts import partition_period
from dagster_sparkmesh.execution.model_target import ModelTarget, span_of
from dagster_sparkmesh.execution.row_checks import write_row_checks
from dagster_sparkmesh.execution.writes.commit import commit
from dagster_sparkmesh.execution.writes.interval_batches import interval_batches
from dagster_sparkmesh.execution.writes.queries import empty_select
from dagster_sparkmesh.execution.writes.records import WriteResult
from dagster_sparkmesh.snapshot.records import Interval


@dataclass
class _TableSoFar:
    """What this step knows of the physical table between its batches."""

    exists: bool
    created: bool = False
    """This step created it: it held nothing before, so a write into it reads no earlier rows."""


@dataclass(frozen=True)
class _BatchWrite:
    rows: int
    checks: RowChecks | None
    """The audits the write counted on the batch's rows (``execution.row_checks``), when it could."""


def write_time_range(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    kind = target.model.kind
    period = partition_period(target.model)
    # Batches never overlap: in a table this step creates, no batch's window can hold stale partitions (a
    # concurrent run writes there only if its range overlaps this one, and then it writes the same rows).
    table = _TableSoFar(exists=not target.listed_absent and ctx.engine.catalog.physical_exists(target.table))
    # A model that reads itself reads its earlier intervals: one interval at a time, in order, from a table that
    # exists (empty, with the declared columns) before its first query is even analyzed.
    batch_size = 1 if target.model.depends_on_self else kind.batch_size
    if target.model.depends_on_self and not table.exists:
        first = min(target.intervals)
        window = TimeWindow(kind.time_column, first.start, first.end, kind.time_column_format, period)
        table.created = ctx.engine.creation.create_interval_table(
            target.table, empty_select(target.model), window, empty_view=True
        )
        table.exists = True
    rows, result = 0, WriteResult()
    incomplete: list[Interval] = []
    for step in interval_batches(ctx, target, batch_size):
        batch, unit_intervals, query = step.interval, step.unit_intervals, step.query
        window = TimeWindow(kind.time_column, batch.start, batch.end, kind.time_column_format, period)
        covered = span_of(unit_intervals) == batch  # the write's rows are the audited ones: it may count checks
        with ctx.state.table_write_lock(target.table):  # a period holds several intervals: writers take turns
            written = _write_batch(ctx, target, table, batch, query, window, covered)
        committed = commit(ctx, target, unit_intervals, checks=written.checks)
        rows += written.rows
        incomplete += committed.incomplete
        result = WriteResult(rows=rows, audits=committed.audits, incomplete=tuple(incomplete))
    return result


def _write_batch(
    ctx: ExecutionContext, target: ModelTarget, table: _TableSoFar, batch: Interval, query: str,
    window: TimeWindow, covered: bool,
) -> _BatchWrite:
    """One batch's write, holding the table's write lock. A new period table is created by its first batch's write;
    another new table is created empty first (not by this step when a concurrent run created it first). Created
    under the lock, it is known to hold nothing yet: its first write reads no view."""
    if not table.exists:
        checks = write_row_checks(ctx, target.model, target.table, True) if covered else None
        first = ctx.engine.creation.write_first_interval(
            target.table, query, window, columns=target.output_columns, checks=checks
        )
        if first is not None:
            table.exists = table.created = True
            return _BatchWrite(first, checks)
    columns = target.columns_analyzed_for(batch)
    new = not table.exists and ctx.engine.creation.create_interval_table(target.table, query, window, columns=columns)
    table.exists = True
    table.created = table.created or new
    checks = write_row_checks(ctx, target.model, target.table, table.created) if covered else None
    written = ctx.engine.overwrite_interval(target.table, query, window, fresh=table.created, new=new, checks=checks)
    return _BatchWrite(written, checks)
