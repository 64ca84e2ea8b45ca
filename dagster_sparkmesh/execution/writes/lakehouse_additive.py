"""Write strategies of lakehouse tables for the kinds that add to their table rather than replace a time window,
each one commit of the format (``execution.writes.lakehouse_table``): INCREMENTAL_BY_PARTITION (the partitions the
query's rows hold are replaced) and INCREMENTAL_UNMANAGED (rows appended, or, with ``insert_overwrite``, the
partitions they hold replaced). As with the default layouts (``execution.writes.additive``), a table holding no
recorded interval (new, restated whole, or computed from incomplete inputs) becomes the query's rows."""

from __future__ import annotations

from dagster_sparkmesh.engine.lakehouse_tables import append_rows, overwrite_partitions
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget, span_of
from dagster_sparkmesh.execution.writes.commit import missing_inputs
from dagster_sparkmesh.execution.writes.lakehouse_table import (
    EVERYTHING, LakehouseTable, open_table, overwrite, rows_written, write_and_commit,
)
from dagster_sparkmesh.execution.writes.queries import select_for
from dagster_sparkmesh.execution.writes.records import WriteResult
from dagster_sparkmesh.plan.coverage import complete_part


def write_lakehouse_by_partition(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """The query's rows replace exactly the partitions they hold, once for all missing intervals, in one commit."""
    table = open_table(ctx, target)
    query = select_for(ctx, target, target.span)
    with ctx.state.table_write_lock(target.table):
        whole = not ctx.state.get_intervals(target.model.name, target.version)
        rows, committed = write_and_commit(
            ctx, target, table, query, lambda relation: _add(ctx, table, relation, query, whole=whole, replace=True),
            target.intervals,
        )
    return WriteResult.of(rows, committed)


def write_lakehouse_unmanaged(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """Append the query's rows (``insert_overwrite``: replace the partitions they hold) in one commit. An appended
    interval must never be computed twice: only the intervals before the first one whose inputs are incomplete
    are computed; a crash between the commit and the record appends them again next time, as in SQLMesh."""
    complete, lacking = complete_part(target.intervals, missing_inputs(ctx, target))
    ready = tuple(i for i in sorted(complete) if not lacking or i.start < min(lacking).start)
    waiting = tuple(i for i in target.intervals if i not in ready)
    if not ready:
        return WriteResult(incomplete=waiting)
    table = open_table(ctx, target)
    query = select_for(ctx, target, span_of(ready))
    replace = target.model.kind.insert_overwrite
    with ctx.state.table_write_lock(target.table):
        whole = not ctx.state.get_intervals(target.model.name, target.version)
        rows, committed = write_and_commit(
            ctx, target, table, query, lambda relation: _add(ctx, table, relation, query, whole=whole, replace=replace),
            ready,
        )
    return WriteResult(rows=rows, audits=committed.audits, incomplete=waiting + committed.incomplete)


def _add(ctx: ExecutionContext, table: LakehouseTable, relation: str, query: str, *, whole: bool, replace: bool) -> int:
    """The query's rows into the relation: the whole table (``whole``: none of it counts yet), the partitions they
    hold (``replace``), or appended."""
    if whole:
        return overwrite(ctx, table, relation, query, EVERYTHING)
    spark = ctx.engine.catalog.spark
    written = overwrite_partitions(spark, relation, query) if replace else append_rows(spark, relation, query)
    return rows_written(ctx, table, relation, query, written, whole_table=False)
