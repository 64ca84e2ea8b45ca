"""One lakehouse table (``model.table_formats``) as the lakehouse write strategies see it: whether it exists, its
first write (created with its rows in one commit), the audit branch a write of a table with readers goes to on
Iceberg (write, audit, publish), and the one-commit writes with the rows they wrote (``engine.lakehouse_tables``).

Every lakehouse strategy writes a batch the same way (``write_and_commit``), under the table's write lock: the
table is created by the batch's rows, or the batch is written into it (or its audit branch), then the commit runs
the audits and records the intervals (``execution.writes.commit``). A crash between the format's commit and the
record leaves the intervals missing; the re-run writes them again, so the table ends as if it had run once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from dagster_sparkmesh.engine.lakehouse import require_format_served
from dagster_sparkmesh.engine.lakehouse_tables import (
    EXISTED, AuditBranch, Partitioning, create_lakehouse_table, create_table_as, overwrite_where, rows_of_last_commit,
)
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.writes.commit import commit
from dagster_sparkmesh.execution.writes.queries import empty_select
from dagster_sparkmesh.execution.writes.records import Committed
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.model.table_formats import DELTA, ICEBERG, lakehouse_format
from dagster_sparkmesh.plan.intervals import daily_or_longer
from dagster_sparkmesh.snapshot.records import Interval

EVERYTHING = "TRUE"
"""The condition of a write that replaces the whole table."""
_TIMESTAMPS = ("timestamp", "timestamp_ntz")

WriteInto = Callable[[str], int]
"""Writes a batch's rows into the relation it is given (the table, or its audit branch); returns the rows."""


@dataclass
class LakehouseTable:
    """What a step knows of its lakehouse table between batches."""

    table_format: str
    exists: bool
    """The preflight's listing held it, or this step created it: no look-up before a write (on Iceberg a table
    look-up loads its metadata, 0.3 s: half of a one-day write)."""
    created: bool = False
    """This step created it: nobody reads it yet."""
    time_type: str | None = None
    """The Spark type of the time column, as the query returns it (the table was created with the query's types)."""


def open_table(ctx: ExecutionContext, target: ModelTarget) -> LakehouseTable:
    """The target's table, in the format the session must serve (refused otherwise, before anything is written);
    created empty first when the model reads its own table."""
    table_format = lakehouse_format(target.model) or ""  # (chosen by ``strategy_for`` for its format)
    require_format_served(ctx.engine.catalog.spark.conf, table_format, target.model.catalog)
    table = LakehouseTable(table_format, exists=not target.listed_absent)
    if target.model.depends_on_self and not table.exists:
        create_empty(ctx, target, table, empty_select(target.model))
    return table


def write_and_commit(
    ctx: ExecutionContext, target: ModelTarget, table: LakehouseTable, select: str, write_into: WriteInto,
    intervals: tuple[Interval, ...],
) -> tuple[int, Committed]:
    """One batch, under the caller's table lock: a table that does not exist yet is created holding the rows of
    ``select``; else ``write_into`` writes them into the table, or into its audit branch that the commit publishes
    once the audits passed. Returns the rows written and the commit."""
    if not table.exists:
        first = _create_with_rows(ctx, target, table, select)
        if first is not None:
            return first, commit(ctx, target, intervals)
    with _staging(ctx, target, table) as staged:
        rows = write_into(staged.relation if staged else target.table)
        return rows, commit(ctx, target, intervals, staged=staged)


def overwrite(ctx: ExecutionContext, table: LakehouseTable, relation: str, select: str, condition: str) -> int:
    """The rows of ``select`` replace the relation's rows for which ``condition`` holds, in one commit."""
    written = overwrite_where(ctx.engine.catalog.spark, relation, select, condition)
    return rows_written(ctx, table, relation, select, written, whole_table=condition == EVERYTHING)


def covers_whole_files(table: LakehouseTable, batch: Interval) -> bool:
    """Whether an overwrite by the batch's window covers whole files of the table: always on Delta (its
    ``replaceWhere`` rewrites files as needed) and for a date or string time column (partitioned by its values);
    an Iceberg timestamp column is partitioned by day or hour (``table_partitioning``), which a window of whole
    hours covers, and a shorter one (a 15-minute cron) does not."""
    if table.table_format != ICEBERG or (table.time_type or "").lower() not in _TIMESTAMPS:
        return True
    return all(moment.minute == moment.second == moment.microsecond == 0 for moment in (batch.start, batch.end))


def rows_written(
    ctx: ExecutionContext, table: LakehouseTable, relation: str, select: str, written: int | None, *, whole_table: bool
) -> int:
    """The rows a write reported, else (Delta writes a created table in a query of its own, unobserved) asked under
    the table's write lock, so its last commit is this write: Delta's log says what it wrote; a table written whole
    holds exactly these rows; else the batch's query is counted (run again)."""
    if written is not None:
        return written
    if table.table_format == DELTA:
        logged = rows_of_last_commit(ctx.engine.catalog.spark, relation)
        if logged is not None:
            return logged
    if whole_table:
        return ctx.engine.catalog.row_count(relation)
    return int(ctx.engine.catalog.query_rows(f"SELECT COUNT(*) FROM ({select}) AS written")[0][0])


def create_empty(ctx: ExecutionContext, target: ModelTarget, table: LakehouseTable, query: str) -> None:
    """Create the empty table with the query's columns (a model that reads its own table, an SCD type 2 history);
    ``table.created`` says whether this step created it or found it there."""
    columns = tuple(ctx.engine.catalog.query_schema(query))
    partitioning = table_partitioning(target.model, dict(columns), table.table_format)
    properties = dict(target.model.physical_properties)
    table.created = create_lakehouse_table(
        ctx.engine.catalog.spark, target.table, columns, table.table_format, partitioning, properties
    )
    table.exists = True


def table_partitioning(model: Model, types: dict[str, str], table_format: str) -> Partitioning:
    """SQLMesh partitions a time-range model's table by its time column first (``partition_by_time_column``),
    then by ``partitioned_by``. A timestamp time column is partitioned by its day (its hour for intervals shorter
    than a day) on Iceberg, whose overwrite must cover whole files; Delta's needs no partitioning, and a partition
    per distinct timestamp would only cost. An Iceberg table partitions by the transforms its ``partitioned_by``
    expressions mean too (the others are left out, as the loader says)."""
    time_column = model.kind.time_column if model.kind.has_time_column else None
    others = tuple(column for column in model.partitioned_by if column != time_column)
    if time_column is None:
        return Partitioning(columns=others, transforms=_transforms(model, table_format, None))
    if types.get(time_column, "").lower() not in _TIMESTAMPS:
        return Partitioning(columns=(time_column, *others), transforms=_transforms(model, table_format, time_column))
    if table_format != ICEBERG:
        return Partitioning(columns=others)
    return Partitioning(columns=others, time_transform=("days" if daily_or_longer(model) else "hours", time_column),
                        transforms=_transforms(model, table_format, time_column))


def _transforms(model: Model, table_format: str, time_column: str | None) -> tuple[tuple[str, str, int | None], ...]:
    """The Iceberg transforms of the model's ``partitioned_by`` expressions. A second time transform of a column
    already partitioned by time is left out: Iceberg refuses redundant partition fields (its files are grouped by
    the first one anyway)."""
    if table_format != ICEBERG:
        return ()
    made: list[tuple[str, str, int | None]] = []
    timed = {time_column} if time_column is not None else set()
    for transform in (expression.iceberg for expression in model.partition_expressions):
        if transform is None or transform in made:
            continue
        if transform[2] is None:  # a time transform
            if transform[1] in timed:
                continue
            timed.add(transform[1])
        made.append(transform)
    return tuple(made)


def _create_with_rows(ctx: ExecutionContext, target: ModelTarget, table: LakehouseTable, select: str) -> int | None:
    """The first write of a table the listing did not hold: created with its rows in one commit. None when it was
    there after all (nothing written): it may have readers, so it is written as an existing table is."""
    types = {target.model.kind.time_column: table.time_type} if table.time_type else {}
    partitioning = table_partitioning(target.model, types, table.table_format)
    properties = dict(target.model.physical_properties)
    written = create_table_as(ctx.engine.catalog.spark, target.table, select, table.table_format, partitioning, properties)
    table.exists = True
    if written is EXISTED:
        return None
    table.created = True
    return rows_written(ctx, table, target.table, select, written if isinstance(written, int) else None, whole_table=True)


@contextmanager
def _staging(ctx: ExecutionContext, target: ModelTarget, table: LakehouseTable) -> Iterator[AuditBranch | None]:
    """An audit branch for a write into an Iceberg table that may have readers (it held rows before this step)
    and whose model has audits: write, audit, publish. A table this step created has no reader yet (its
    environment's view comes after the backfill), and Delta has no branches: written directly."""
    if table.created or table.table_format != ICEBERG or not target.model.audits:
        yield None
        return
    branch = AuditBranch(ctx.engine.catalog.spark, target.table)
    branch.open()
    try:
        yield branch
    finally:
        branch.close()
