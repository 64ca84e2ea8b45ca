"""Kinds whose rows are matched by key: INCREMENTAL_BY_UNIQUE_KEY (an upsert) and SCD type 2 (a history merge),
each once for all missing intervals."""

from __future__ import annotations

from dagster_sparkmesh.engine.scd2 import merge_history
from dagster_sparkmesh.engine.unique_keys import refuse_repeated_keys
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.writes.commit import commit
from dagster_sparkmesh.execution.writes.queries import select_for
from dagster_sparkmesh.execution.writes.records import WriteResult


def write_unique_key(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    query = select_for(ctx, target, target.span)
    refuse_repeated_keys(ctx.engine, target.model, query, target.span)
    rows = None
    if not ctx.engine.table_exists(target.table):  # a new table: the upsert is all the rows
        rows = ctx.engine.create_table_with_rows(target.table, query, list(target.model.partitioned_by))
    if rows is None and not ctx.state.get_intervals(target.model.name, target.version):
        # Nothing of the table counts (restated whole, or written from incomplete inputs): build it as new.
        rows = ctx.engine.replace_full(target.table, query)
    if rows is None:
        rows = ctx.engine.upsert_by_key(target.table, query, list(target.model.kind.unique_key))
    return WriteResult.of(rows, commit(ctx, target, target.intervals))


def write_scd_type_2(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """Merge the query's current rows into the history."""
    query = select_for(ctx, target, target.span)
    partitioned_by = list(target.model.partitioned_by)
    rows = merge_history(ctx.engine, target.table, target.model, query, ctx.clock(), partitioned_by)
    return WriteResult.of(rows, commit(ctx, target, target.intervals))
