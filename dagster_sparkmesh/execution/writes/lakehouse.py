"""Write strategies of lakehouse tables (``model.table_formats``): a time-range model's batches, each replacing
exactly its interval in one commit, a FULL model's whole table replaced in one commit, a unique-key model's rows
merged by key (``MERGE INTO``) and an SCD type 2 model's history replaced in one commit (``engine.lakehouse_tables``).

The order is every strategy's (``execution.evaluator``): the table exists, the batch's rows are committed, the
audits run on them, and only then are its intervals recorded. A crash between the commit and the record leaves the
intervals missing; the re-run replaces the same interval again, so the table ends as if it had run once. Writers of
one table take turns under the state store's table lock, as with every layout.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from dagster_sparkmesh.engine.lakehouse import require_format_served
from dagster_sparkmesh.engine.lakehouse_tables import (
    EXISTED, AuditBranch, Partitioning, create_lakehouse_table, create_table_as, merge_by_key, overwrite_where,
    rows_of_last_commit,
)
from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.engine.scd2 import check_source, history_query, with_validity
from dagster_sparkmesh.engine.unique_keys import refuse_repeated_keys
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.writes.commit import commit
from dagster_sparkmesh.execution.writes.interval_batches import interval_batches
from dagster_sparkmesh.execution.writes.keyed import rebuilt_span
from dagster_sparkmesh.execution.writes.queries import empty_select, select_for
from dagster_sparkmesh.execution.writes.records import WriteResult
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.model.table_formats import DELTA, ICEBERG, lakehouse_format
from dagster_sparkmesh.plan.intervals import IntervalUnit, interval_unit
from dagster_sparkmesh.snapshot.records import Interval

_TIMESTAMPS = ("timestamp", "timestamp_ntz")
_EVERYTHING = "TRUE"


@dataclass
class _Table:
    """What a step knows of its lakehouse table between batches."""

    exists: bool
    """The preflight's listing held it, or this step created it: no look-up before a write (on Iceberg a table
    look-up loads its metadata, 0.3 s: half of a one-day write)."""
    created: bool = False
    """This step created it: nobody reads it yet."""
    time_type: str | None = None
    """The Spark type of the time column, as the query returns it (the table was created with the query's types)."""


def write_lakehouse_time_range(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    table_format = _served_format(ctx, target.model)
    kind = target.model.kind
    table = _Table(exists=not target.listed_absent)
    if target.model.depends_on_self and not table.exists:  # it reads its own (empty, at first) table
        table.created = _create_empty(ctx, target, empty_select(target.model), table_format)
        table.exists = True
    batch_size = 1 if target.model.depends_on_self else kind.batch_size
    rows, result = 0, WriteResult()
    for step in interval_batches(ctx, target, batch_size):
        with ctx.state.table_write_lock(target.table):
            select, condition = _interval_select(ctx, target, table, step.query, step.interval)
            first = None if table.exists else _create_with_rows(ctx, target, table, select, table_format)
            if first is not None:
                rows += first
                committed = commit(ctx, target, step.unit_intervals)
            else:
                with _staging(ctx, target, table_format, readers=not table.created) as staged:
                    relation = staged.relation if staged else target.table
                    rows += _overwrite(ctx, relation, select, condition, table_format)
                    committed = commit(ctx, target, step.unit_intervals, staged=staged)
        result = WriteResult(rows=rows, audits=committed.audits, incomplete=result.incomplete + committed.incomplete)
    return result


def write_lakehouse_full(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """The whole table replaced by the query's rows in one commit (SQLMesh recomputes a FULL model each run)."""
    table_format = _served_format(ctx, target.model)
    table = _Table(exists=not target.listed_absent)
    if target.model.depends_on_self and not table.exists:
        table.created, table.exists = _create_empty(ctx, target, empty_select(target.model), table_format), True
    query = select_for(ctx, target, target.span)
    with ctx.state.table_write_lock(target.table):
        first = None if table.exists else _create_with_rows(ctx, target, table, query, table_format)
        if first is not None:
            return WriteResult.of(first, commit(ctx, target, target.intervals))
        with _staging(ctx, target, table_format, readers=not table.created) as staged:
            relation = staged.relation if staged else target.table
            rows = _overwrite(ctx, relation, query, _EVERYTHING, table_format)
            committed = commit(ctx, target, target.intervals, staged=staged)
    return WriteResult.of(rows, committed)


def write_lakehouse_unique_key(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """The query's rows merged by key in one commit (``MERGE INTO``, keys null-safe), once for all missing
    intervals. As with every layout (``execution.writes.keyed``): a repeated key is refused before anything is
    written; earlier time than the table holds rebuilds the table whole from one query over all its time; a table
    holding no recorded interval is replaced whole."""
    table_format = _served_format(ctx, target.model)
    table = _Table(exists=not target.listed_absent)
    if target.model.depends_on_self and not table.exists:
        table.created, table.exists = _create_empty(ctx, target, empty_select(target.model), table_format), True
    with ctx.state.table_write_lock(target.table):
        recorded = ctx.state.get_intervals(target.model.name, target.version)
        rebuilt = rebuilt_span(target, recorded) if table.exists else None
        span = rebuilt or target.span
        query = select_for(ctx, target, span)
        rows = refuse_repeated_keys(ctx.engine.catalog, target.model, query, span)
        first = None if table.exists else _create_with_rows(ctx, target, table, query, table_format)
        if first is not None:
            return WriteResult.of(first, commit(ctx, target, target.intervals))
        with _staging(ctx, target, table_format, readers=not table.created) as staged:
            relation = staged.relation if staged else target.table
            if rebuilt is None and recorded:
                merge_by_key(ctx.engine.catalog.spark, relation, query, target.model.kind.unique_key)
            else:
                rows = _overwrite(ctx, relation, query, _EVERYTHING, table_format)
            committed = commit(ctx, target, target.intervals, staged=staged)
    return WriteResult.of(rows, committed)


def write_lakehouse_scd_type_2(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    """The query's current rows merged into the history (``engine.scd2``): the table's next content, computed from
    the table and the source, replaces it in one commit, as SQLMesh replaces an SCD type 2 table each run. Returns
    the rows the table then holds."""
    table_format = _served_format(ctx, target.model)
    kind, source = target.model.kind, select_for(ctx, target, target.span)
    check_source(ctx.engine.catalog, target.model, source)
    table = _Table(exists=not target.listed_absent)
    with ctx.state.table_write_lock(target.table):
        first_load = not table.exists and _create_empty(ctx, target, with_validity(kind, source), table_format)
        table.created = first_load
        validity = (kind.valid_from_name, kind.valid_to_name)
        columns = [name for name, _ in ctx.engine.catalog.columns(target.table) if name not in validity]
        query = history_query(kind, target.table, source, columns, ctx.clock(), first_load=first_load)
        with _staging(ctx, target, table_format, readers=not table.created) as staged:
            relation = staged.relation if staged else target.table
            rows = _overwrite(ctx, relation, query, _EVERYTHING, table_format)
            committed = commit(ctx, target, target.intervals, staged=staged)
    return WriteResult.of(rows, committed)


@contextmanager
def _staging(ctx: ExecutionContext, target: ModelTarget, table_format: str, *, readers: bool) -> Iterator[AuditBranch | None]:
    """An audit branch for a write into an Iceberg table that may have readers (it held rows before this step)
    and whose model has audits: write, audit, publish. A table this step created has no reader yet (its
    environment's view comes after the backfill), and Delta has no branches: written directly."""
    if not (readers and table_format == ICEBERG and target.model.audits):
        yield None
        return
    branch = AuditBranch(ctx.engine.catalog.spark, target.table)
    branch.open()
    try:
        yield branch
    finally:
        branch.close()


def _interval_select(
    ctx: ExecutionContext, target: ModelTarget, table: _Table, query: str, batch: Interval
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


def _overwrite(ctx: ExecutionContext, relation: str, select: str, condition: str, table_format: str) -> int:
    """The rows of ``select`` replace the relation's rows for which ``condition`` holds, in one commit."""
    written = overwrite_where(ctx.engine.catalog.spark, relation, select, condition)
    if written is not None:
        return written
    return _unreported_rows(ctx, relation, select, table_format, whole_table=condition == _EVERYTHING)


def _create_with_rows(ctx: ExecutionContext, target: ModelTarget, table: _Table, select: str, table_format: str) -> int | None:
    """The first write of a table the listing did not hold: created with its rows in one commit. None when it was
    there after all (nothing written): it may have readers, so it is written as an existing table is."""
    types = {target.model.kind.time_column: table.time_type} if table.time_type else {}
    partitioning = table_partitioning(target.model, types, table_format)
    written = create_table_as(ctx.engine.catalog.spark, target.table, select, table_format, partitioning)
    table.exists = True
    if written is EXISTED:
        return None
    table.created = True
    if isinstance(written, int):
        return written
    return _unreported_rows(ctx, target.table, select, table_format, whole_table=True)


def _create_empty(ctx: ExecutionContext, target: ModelTarget, query: str, table_format: str) -> bool:
    """Create the empty table with the query's columns (a model that reads its own table); False when it was there."""
    columns = tuple(ctx.engine.catalog.query_schema(query))
    partitioning = table_partitioning(target.model, dict(columns), table_format)
    return create_lakehouse_table(ctx.engine.catalog.spark, target.table, columns, table_format, partitioning)


def _unreported_rows(ctx: ExecutionContext, relation: str, select: str, table_format: str, *, whole_table: bool) -> int:
    """The rows of a write whose observation did not report them (Delta writes a created table in a query of its
    own), asked under the table's write lock, so its last commit is this write: Delta's log says what it wrote; a
    table written whole holds exactly these rows; else the interval's query is counted (run again)."""
    if table_format == DELTA:
        logged = rows_of_last_commit(ctx.engine.catalog.spark, relation)
        if logged is not None:
            return logged
    if whole_table:
        return ctx.engine.catalog.row_count(relation)
    return int(ctx.engine.catalog.query_rows(f"SELECT COUNT(*) FROM ({select}) AS written")[0][0])


def table_partitioning(model: Model, types: dict[str, str], table_format: str) -> Partitioning:
    """SQLMesh partitions a time-range model's table by its time column first (``partition_by_time_column``),
    then by ``partitioned_by``. A timestamp time column is partitioned by its day (its hour for intervals shorter
    than a day) on Iceberg, whose overwrite must cover whole files; Delta's needs no partitioning, and a partition
    per distinct timestamp would only cost."""
    time_column = model.kind.time_column if model.kind.has_time_column else None
    others = tuple(column for column in model.partitioned_by if column != time_column)
    if time_column is None:
        return Partitioning(columns=others)
    if types.get(time_column, "").lower() not in _TIMESTAMPS:
        return Partitioning(columns=(time_column, *others))
    if table_format != ICEBERG:
        return Partitioning(columns=others)
    coarse = interval_unit(model.cron) in (IntervalUnit.DAY, IntervalUnit.WEEK, IntervalUnit.MONTH, IntervalUnit.YEAR)
    return Partitioning(columns=others, time_transform=("days" if coarse else "hours", time_column))


def _served_format(ctx: ExecutionContext, model: Model) -> str:
    table_format = lakehouse_format(model) or ""  # (chosen by ``strategy_for`` for its format)
    require_format_served(ctx.engine.catalog.spark.conf.get("spark.sql.catalog.spark_catalog", None), table_format)
    return table_format
