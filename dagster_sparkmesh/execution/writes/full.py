"""FULL models (SQL and Python): the whole table recomputed once for all missing intervals, as a generation table
(the default layout) or a plain table."""

from __future__ import annotations

from dagster_sparkmesh.engine.generation_tables import (
    GENERATIONS, create_empty_generation_table, create_generation_table, full_table_layout, replace_generation,
)
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.layouts import generation_tables_enabled
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.row_checks import row_checks
from dagster_sparkmesh.execution.unchanged_inputs import inputs_digest
from dagster_sparkmesh.execution.writes.commit import commit
from dagster_sparkmesh.execution.writes.queries import empty_select, select_for
from dagster_sparkmesh.execution.writes.records import WriteResult


def write_full(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    listed_absent = target.listed_absent and not target.model.depends_on_self  # (its empty table: created first)
    layout = None if listed_absent else full_table_layout(ctx.engine, target.table)
    if layout == GENERATIONS or (layout is None and generation_tables_enabled()):
        return _write_generation(ctx, target, exists=layout is not None)
    partitioned_by = list(target.model.partitioned_by)
    if target.model.depends_on_self and layout is None:  # it reads its own (empty, at first) table
        ctx.engine.creation.create_table_like_query(target.table, empty_select(target.model), partitioned_by)
        layout = "table"
    query = select_for(ctx, target, target.span)
    rows = ctx.engine.creation.create_table_with_rows(target.table, query, partitioned_by) if layout is None else None
    if rows is None:
        rows = ctx.engine.replace_full(target.table, query)
    return WriteResult.of(rows, commit(ctx, target, target.intervals))


def _write_generation(ctx: ExecutionContext, target: ModelTarget, *, exists: bool) -> WriteResult:
    """Write a generation and switch the view, or keep the table when its query and inputs are unchanged since
    its last write (``execution.unchanged_inputs``).

    The inputs are read, the table written and its view switched under the table's write lock, so writers of one
    table read their inputs in the order they switch. The digest is forgotten before a write and recorded after its
    audits passed: a recorded digest always describes rows that passed them."""
    partitioned_by = list(target.model.partitioned_by)
    with ctx.state.table_write_lock(target.table):  # a write drops generations no view names: one at a time
        if target.model.depends_on_self and not exists:  # it reads its own (empty, at first) table
            create_empty_generation_table(ctx.engine, target.table, empty_select(target.model), partitioned_by)
            exists = True
        query = select_for(ctx, target, target.span)
        digest = inputs_digest(ctx, target.model, query, target.table_for)
        if exists and target.keep_unchanged and digest is not None:
            if digest == ctx.state.write_inputs_digest(target.table):
                # The same query over the same rows: the table already holds its result.
                return WriteResult.of(0, commit(ctx, target, target.intervals, audit=False), kept=True)
        # A new table has the query's own types. Not with partition columns: a string one stores '' as NULL.
        counts = not (target.model.partitioned_by or target.model.depends_on_self)
        checks = row_checks(ctx, target.model) if counts and not exists else None
        rows = None if exists else create_generation_table(ctx.engine, target.table, query, partitioned_by, checks)
        if rows is None:  # the table was there, or another writer created it first
            ctx.state.record_write_inputs(target.table, None)
            checks = row_checks(ctx, target.model) if counts else None
            rows = replace_generation(ctx.engine, target.table, query, checks)  # (counted if the types are kept)
    committed = commit(ctx, target, target.intervals, checks=checks)
    if digest is not None:
        ctx.state.record_write_inputs(target.table, digest)
    return WriteResult.of(rows, committed)
