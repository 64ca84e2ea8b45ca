"""Kinds whose rows are matched by key: INCREMENTAL_BY_UNIQUE_KEY (an upsert) and SCD type 2 (a history merge),
each once for all missing intervals."""

from __future__ import annotations

from dagster_sparkmesh.engine.scd2 import merge_history
from dagster_sparkmesh.engine.unique_keys import refuse_repeated_keys
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget, span_of
from dagster_sparkmesh.execution.writes.commit import commit
from dagster_sparkmesh.execution.writes.queries import select_for
from dagster_sparkmesh.execution.writes.records import WriteResult
from dagster_sparkmesh.snapshot.records import Interval


def write_unique_key(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """Upsert the query's rows by key, once for all missing intervals. Intervals before every recorded one (a dev
    plan filling in earlier time of the table prod reads, which it may not restate) only add the keys the table
    lacks: its rows for the other keys come from later time, and a fresh build, in order, keeps those."""
    recorded = ctx.state.get_intervals(target.model.name, target.version)
    first_recorded = min((i.start for i in recorded), default=None)
    behind = tuple(i for i in target.intervals if first_recorded is not None and i.end <= first_recorded)
    ahead = tuple(i for i in target.intervals if i not in behind)
    rows = 0
    if behind and ctx.engine.table_exists(target.table):
        query = _checked_query(ctx, target, span_of(behind))
        rows += ctx.engine.insert_new_keys(target.table, query, list(target.model.kind.unique_key))
    elif behind:
        ahead = target.intervals  # no table after all: everything is a first write
    if ahead:
        rows += _upsert(ctx, target, _checked_query(ctx, target, span_of(ahead)), recorded)
    return WriteResult.of(rows, commit(ctx, target, target.intervals))


def _checked_query(ctx: ExecutionContext, target: ModelTarget, span: Interval) -> str:
    query = select_for(ctx, target, span)
    refuse_repeated_keys(ctx.engine, target.model, query, span)
    return query


def _upsert(ctx: ExecutionContext, target: ModelTarget, query: str, recorded: list[Interval]) -> int:
    rows = None
    if not ctx.engine.table_exists(target.table):  # a new table: the upsert is all the rows
        rows = ctx.engine.create_table_with_rows(target.table, query, list(target.model.partitioned_by))
    if rows is None and not recorded:
        # Nothing of the table counts (restated whole, or written from incomplete inputs): build it as new.
        rows = ctx.engine.replace_full(target.table, query)
    if rows is None:
        rows = ctx.engine.upsert_by_key(target.table, query, list(target.model.kind.unique_key))
    return rows


def write_scd_type_2(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """Merge the query's current rows into the history."""
    query = select_for(ctx, target, target.span)
    partitioned_by = list(target.model.partitioned_by)
    rows = merge_history(ctx.engine, target.table, target.model, query, ctx.clock(), partitioned_by)
    return WriteResult.of(rows, commit(ctx, target, target.intervals))
