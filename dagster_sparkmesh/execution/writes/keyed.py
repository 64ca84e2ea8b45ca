"""Kinds whose rows are matched by key: INCREMENTAL_BY_UNIQUE_KEY (an upsert) and SCD type 2 (a history merge),
each once for all missing intervals."""

from __future__ import annotations

from collections.abc import Sequence

from dagster_sparkmesh.engine.scd2 import merge_history
from dagster_sparkmesh.engine.unique_keys import refuse_repeated_keys
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget, span_of
from dagster_sparkmesh.execution.writes.commit import commit
from dagster_sparkmesh.execution.writes.queries import merge_rules, select_for
from dagster_sparkmesh.execution.writes.records import WriteResult
from dagster_sparkmesh.plan.intervals import Schedule, interval_cron
from dagster_sparkmesh.snapshot.records import Interval


def write_unique_key(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """Upsert the query's rows by key, once for all missing intervals. Time before the end of what the table holds
    (a dev plan filling in earlier time of the table prod reads, which it may not restate) is not upserted over
    newer rows: the table is rebuilt from one query over everything it holds and the missing time, as a restatement
    in prod rebuilds it. Writers of one table take turns: every write goes through the same staging table."""
    with ctx.state.table_write_lock(target.table):
        recorded = ctx.state.get_intervals(target.model.name, target.version)
        rebuilt = rebuilt_span(target, recorded)
        if rebuilt is not None and ctx.engine.catalog.table_exists(target.table):
            query = _checked_query(ctx, target, rebuilt)
            rows = ctx.engine.replace_with_query(target.table, query)  # staged: a crash leaves the rows whole
        else:
            rows = _upsert(ctx, target, _checked_query(ctx, target, target.span), bool(recorded))
    return WriteResult.of(rows, commit(ctx, target, target.intervals))


def rebuilt_span(target: ModelTarget, recorded: Sequence[Interval]) -> Interval | None:
    """The span to rebuild the table over when the write fills in time before the end of what it holds (an upsert
    of older rows over newer ones would be wrong), else None: an upsert of the missing span."""
    held = span_of(tuple(recorded)) if recorded else None
    # A kind that disables restatement keeps what it holds: its earlier time is upserted like any other.
    if held is None or getattr(target.model.kind, "disable_restatement", False) or target.span.start >= held.end:
        return None
    if target.span.start >= Schedule.of(interval_cron(target.model)).floor(held.end):
        # What it holds ends inside an interval (a partial one, allow_partials), which the write computes again
        # from its start: the same time, more of it, not older rows over newer ones (as the planner's rule).
        return None
    return Interval(start=min(held.start, target.span.start), end=max(held.end, target.span.end))


def _checked_query(ctx: ExecutionContext, target: ModelTarget, span: Interval) -> str:
    query = select_for(ctx, target, span)
    refuse_repeated_keys(ctx.engine.catalog, target.model, query, span)
    return query


def _upsert(ctx: ExecutionContext, target: ModelTarget, query: str, holds_intervals: bool) -> int:
    rows = None
    if not ctx.engine.catalog.table_exists(target.table):  # a new table: the upsert is all the rows
        rows = ctx.engine.creation.create_table_with_rows(target.table, query, list(target.model.partitioned_by))
    if rows is None and not holds_intervals:
        # Nothing of the table counts (restated whole, or written from incomplete inputs): build it as new.
        rows = ctx.engine.replace_full(target.table, query)
    if rows is None:
        merge = merge_rules(ctx, target, target.span)
        rows = ctx.engine.upsert_by_key(target.table, query, list(target.model.kind.unique_key), merge)
    return rows


def write_scd_type_2(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """Merge the query's current rows into the history."""
    query = select_for(ctx, target, target.span)
    partitioned_by = list(target.model.partitioned_by)
    merged = merge_history(ctx.engine, target.table, target.model, query, ctx.clock(), partitioned_by)
    return WriteResult.of(merged.rows, commit(ctx, target, target.intervals), warning=merged.warning)
