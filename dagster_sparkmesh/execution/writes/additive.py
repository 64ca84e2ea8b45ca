"""Kinds that add to their table rather than replace a time window: INCREMENTAL_BY_PARTITION (the partitions the
query's rows hold are replaced) and INCREMENTAL_UNMANAGED (rows appended, or partitions replaced)."""

from __future__ import annotations

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget, span_of
from dagster_sparkmesh.execution.writes.commit import commit, missing_inputs
from dagster_sparkmesh.execution.writes.queries import empty_select, select_for
from dagster_sparkmesh.execution.writes.records import WriteResult
from dagster_sparkmesh.plan.coverage import complete_part


def write_by_partition(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """The query's rows replace exactly the partitions they hold, once for all missing intervals; the table's other
    partitions keep their rows."""
    query = select_for(ctx, target, target.span)
    rows = _first_write(ctx, target, query)
    if rows is None:
        rows = ctx.engine.overwrite_partitions(target.table, query, list(target.model.partitioned_by))
    return WriteResult.of(rows, commit(ctx, target, target.intervals))


def write_unmanaged(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """Append the query's rows (``insert_overwrite``: replace the partitions they hold).

    An appended interval must never be computed twice, so only the intervals before the first one whose inputs
    are incomplete are computed (the others wait, missing). A crash between the append and the record of its
    intervals appends them again next time, as in SQLMesh."""
    complete, lacking = complete_part(target.intervals, missing_inputs(ctx, target))
    ready = tuple(i for i in sorted(complete) if not lacking or i.start < min(lacking).start)
    waiting = tuple(i for i in target.intervals if i not in ready)
    if not ready:
        return WriteResult(incomplete=waiting)
    query = select_for(ctx, target, span_of(ready))
    rows = _first_write(ctx, target, query)
    if rows is None and target.model.kind.insert_overwrite:
        rows = ctx.engine.overwrite_partitions(target.table, query, list(target.model.partitioned_by))
    elif rows is None:
        rows = ctx.engine.append_rows(target.table, query)
    committed = commit(ctx, target, ready)
    return WriteResult(rows=rows, audits=committed.audits, incomplete=waiting + committed.incomplete)


def _first_write(ctx: ExecutionContext, target: ModelTarget, query: str) -> int | None:
    """SQLMesh's first insert: the table becomes the query's rows when none of it counts yet (no table, or no
    interval recorded: new, restated whole, or computed from incomplete inputs). None: add to the table."""
    rows = None
    partitioned_by = list(target.model.partitioned_by)
    if not ctx.engine.catalog.table_exists(target.table):
        if target.model.depends_on_self:
            # Its query reads the table: create it empty first; adding the rows to it is then the whole write.
            ctx.engine.creation.create_table_like_query(target.table, empty_select(target.model), partitioned_by)
            return None
        rows = ctx.engine.creation.create_table_with_rows(target.table, query, partitioned_by)
    if rows is None and not ctx.state.get_intervals(target.model.name, target.version):
        rows = ctx.engine.replace_full(target.table, query)
    return rows
