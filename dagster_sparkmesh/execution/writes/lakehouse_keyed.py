"""Write strategies of lakehouse tables for the kinds matched by key, each once for all missing intervals: a
unique-key model's rows merged into its table by key (``MERGE INTO``) and an SCD type 2 model's history replaced in
one commit (``engine.scd2``), both audited on an Iceberg branch before readers see them
(``execution.writes.lakehouse_table``)."""

from __future__ import annotations

from dagster_sparkmesh.engine.lakehouse_tables import merge_by_key
from dagster_sparkmesh.engine.scd2 import check_source, history_columns, history_query, with_validity
from dagster_sparkmesh.engine.unique_keys import refuse_repeated_keys
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.writes.keyed import rebuilt_span
from dagster_sparkmesh.execution.writes.lakehouse_table import (
    EVERYTHING, create_empty, open_table, overwrite, write_and_commit,
)
from dagster_sparkmesh.execution.writes.queries import merge_rules, select_for
from dagster_sparkmesh.execution.writes.records import WriteResult


def write_lakehouse_unique_key(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """The query's rows merged by key in one commit (``MERGE INTO``, keys null-safe). As with every layout
    (``execution.writes.keyed``): a repeated key is refused before anything is written; time earlier than what the
    table holds rebuilds the table whole from one query over all its time (older rows are never merged over newer
    ones); a table holding no recorded interval is replaced whole."""
    table = open_table(ctx, target)
    with ctx.state.table_write_lock(target.table):
        recorded = ctx.state.get_intervals(target.model.name, target.version)
        rebuilt = rebuilt_span(target, recorded) if table.exists else None
        span = rebuilt or target.span
        query = select_for(ctx, target, span)
        rows = refuse_repeated_keys(ctx.engine.catalog, target.model, query, span)

        def write_into(relation: str) -> int:
            if rebuilt is not None or not recorded:
                return overwrite(ctx, table, relation, query, EVERYTHING)
            merge = merge_rules(ctx, target, span)
            merge_by_key(ctx.engine.catalog.spark, relation, query, target.model.kind.unique_key, merge)
            return rows

        written, committed = write_and_commit(ctx, target, table, query, write_into, target.intervals)
    return WriteResult.of(written, committed)


def write_lakehouse_scd_type_2(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """The query's current rows merged into the history: the table's next content, computed from the table and
    the source, replaces it in one commit, as SQLMesh replaces an SCD type 2 table each run. Returns the rows the
    table then holds."""
    table = open_table(ctx, target)
    kind, source = target.model.kind, select_for(ctx, target, target.span)
    checked = check_source(ctx.engine.catalog, target.model, source)  # before a table is created
    with ctx.state.table_write_lock(target.table):
        if not table.exists:  # the history query reads the table: it starts empty
            create_empty(ctx, target, table, with_validity(kind, source, checked.columns))
        columns, updated_at_type = history_columns(kind, ctx.engine.catalog.columns(target.table))
        query = history_query(kind, target.table, source, columns, ctx.clock(), first_load=table.created,
                              updated_at_type=updated_at_type, pick_order=checked.pick_order)
        rows, committed = write_and_commit(
            ctx, target, table, query, lambda relation: overwrite(ctx, table, relation, query, EVERYTHING),
            target.intervals,
        )
    return WriteResult.of(rows, committed, warning=checked.warning)
