"""Write strategies of lakehouse tables (``model.table_formats``) for the kinds that replace a time window or the
whole table: a time-range model's batches, each replacing exactly its interval in one commit (the query's rows of
the window replace the table's rows of it: Iceberg's overwrite by filter, Delta's ``replaceWhere``; an empty
interval deletes them; on Iceberg a window shorter than the hour its table is partitioned by is replaced by a merge
that inserts the rows and deletes the window's old ones), and a FULL model's whole table replaced in one commit. Keyed kinds:
``execution.writes.lakehouse_keyed``; kinds that add to their table: ``execution.writes.lakehouse_additive``; the
table and the batch write they share: ``execution.writes.lakehouse_table``.
"""

from __future__ import annotations

from functools import partial

from dagster_sparkmesh.engine.lakehouse_tables import replace_by_merge
from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.writes.interval_batches import interval_batches
from dagster_sparkmesh.execution.writes.lakehouse_table import (
    EVERYTHING, LakehouseTable, covers_whole_files, open_table, overwrite, rows_written, write_and_commit,
)
from dagster_sparkmesh.execution.writes.queries import select_for
from dagster_sparkmesh.execution.writes.records import WriteResult
from dagster_sparkmesh.snapshot.records import Interval


def write_lakehouse_time_range(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """Each batch of missing intervals replaces exactly its window of the table, in one commit."""
    table = open_table(ctx, target)
    batch_size = 1 if target.model.depends_on_self else target.model.kind.batch_size
    rows, result = 0, WriteResult()
    for step in interval_batches(ctx, target, batch_size):
        with ctx.state.table_write_lock(target.table):
            select, condition = _interval_select(ctx, target, table, step.query, step.interval)
            write_into = partial(_replace_window, ctx, table, step.interval, select, condition)
            written, committed = write_and_commit(ctx, target, table, select, write_into, step.unit_intervals)
        rows += written
        result = WriteResult(rows=rows, audits=committed.audits, incomplete=result.incomplete + committed.incomplete)
    return result


def write_lakehouse_full(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """The whole table replaced by the query's rows in one commit (SQLMesh recomputes a FULL model each run)."""
    table = open_table(ctx, target)
    query = select_for(ctx, target, target.span)
    with ctx.state.table_write_lock(target.table):
        rows, committed = write_and_commit(
            ctx, target, table, query, lambda relation: overwrite(ctx, table, relation, query, EVERYTHING),
            target.intervals,
        )
    return WriteResult.of(rows, committed)


def _replace_window(
    ctx: ExecutionContext, table: LakehouseTable, batch: Interval, select: str, condition: str, relation: str
) -> int:
    """The batch's rows replace the relation's rows of its window, in one commit."""
    if covers_whole_files(table, batch):
        return overwrite(ctx, table, relation, select, condition)
    replace_by_merge(ctx.engine.catalog.spark, relation, select, condition)
    return rows_written(ctx, table, relation, select, None, whole_table=False)


def _interval_select(
    ctx: ExecutionContext, target: ModelTarget, table: LakehouseTable, query: str, batch: Interval
) -> tuple[str, str]:
    """The batch's rows, and the condition of its window: query rows outside the window are not written (a query
    that returns other days cannot touch them, as with every layout)."""
    kind = target.model.kind
    if table.time_type is None:
        analyzed = dict(target.output_columns or ()) or dict(ctx.engine.catalog.query_schema(query))
        table.time_type = analyzed[kind.time_column]
    window = TimeWindow(kind.time_column, batch.start, batch.end, kind.time_column_format)
    condition = window.predicate(table.time_type)
    return f"SELECT * FROM ({query}) AS source WHERE {condition}", condition
