"""Generation tables: a FULL model's rows as immutable generations behind its physical view.

Replacing a table's whole content in place is what ``INSERT OVERWRITE`` does, and Spark deletes the table's files
before its job writes the new ones: for the length of the write, every reader of the table (a dashboard on the
prod view, a child model of a concurrent run) finds it empty, or fails on a file it listed a moment before. To
shorten that window the rows used to be computed and persisted first, which cost a second Spark job per write.

A generation table keeps the rows in ``<physical>__data``, partitioned by a hidden ``sparkmesh_generation``
column (then by the model's own ``partitioned_by``); the physical table is a view of the model's columns over
one generation. A write appends a new generation (one job, straight from the query: readers do not see it), then
switches the view to it with one ``ALTER VIEW``: a reader finds the old rows or the new ones, never none. The
generation before stays readable for ``RETIRED_SEGMENT_GRACE`` after the switch (a query that resolved the view
before it may still list its files) and is dropped by a later write; a generation no view ever named (a crashed
write's) is dropped by the next write that finds it. Writes into one table take turns (``state.write_locks``): a
write could otherwise drop the generation another write is about to switch to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dagster_sparkmesh.engine import period_segments
from dagster_sparkmesh.engine.counted_writes import RowChecks, insert_counting
from dagster_sparkmesh.engine.failures import error_class
from dagster_sparkmesh.engine.partition_sql import column_list, drop_partition_statements, string_literal
from dagster_sparkmesh.engine.period_segments import new_version, version_written_at_ms, wall_clock_ms
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.snapshot.naming import period_data_table, quote, quote_identifier

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine

GENERATION_COLUMN = "sparkmesh_generation"
GENERATIONS = "generations"
_GENERATION_IN_VIEW = re.compile(rf"`{GENERATION_COLUMN}`\s*=\s*'(?P<generation>[0-9a-f]+)'")


def names_generation(view_text: str) -> bool:
    """The view's text names one generation (the view of a generation table)."""
    return _GENERATION_IN_VIEW.search(view_text) is not None


def create_generation_table(
    engine: SparkEngine, table: str, query_sql: str, partitioned_by: Sequence[str] = (), checks: RowChecks | None = None
) -> int | None:
    """The data table holding the query's rows as its first generation (one CTAS, which counts them), then the view
    over it. Returns the rows written, or None when another writer created the data table first (then write with
    ``replace_generation``, which also creates the view a crash may have left missing)."""
    generation = new_version()
    written = _create_data_table(engine, table, query_sql, generation, partitioned_by, checks)
    if written is not None:
        # After its data: never seen before the rows it shows (invariant 2).
        _create_view(engine, table, generation, query_sql, partitioned_by)
    return written


def create_empty_generation_table(
    engine: SparkEngine, table: str, query_sql: str, partitioned_by: Sequence[str] = ()
) -> None:
    """An empty generation table with the query's columns (a FULL model that reads its own table). Its view names
    a generation without rows, also when the data table was there already (a crash before its view, or a
    concurrent writer: any empty generation reads as any other)."""
    generation = new_version()
    _create_data_table(engine, table, f"SELECT * FROM ({query_sql}) AS source WHERE 1 = 0", generation, partitioned_by)
    _create_view(engine, table, generation, query_sql, partitioned_by)


def _create_data_table(
    engine: SparkEngine, table: str, query_sql: str, generation: str, partitioned_by: Sequence[str],
    checks: RowChecks | None = None,
) -> int | None:
    """One CTAS of the query's rows as ``generation``; returns the rows written, None when the data table was there
    already."""
    select = f"SELECT *, {_generation_literal(generation)} FROM ({query_sql}) AS source"
    try:
        return engine.creation.create_table_from_select(
            period_data_table(table), select, [GENERATION_COLUMN, *partitioned_by], checks
        )
    except EngineError as error:
        duplicate = error_class(error.__cause__) in ("COLUMN_ALREADY_EXISTS", "AMBIGUOUS_COLUMN_OR_FIELD")
        if duplicate and f"`{GENERATION_COLUMN}`" in str(error.__cause__):
            raise EngineError(
                f"the query of {table} has a column named {GENERATION_COLUMN}, the name of sparkmesh's hidden column",
                hint="rename the column",
            ) from error
        raise


def _create_view(
    engine: SparkEngine, table: str, generation: str, query_sql: str, partitioned_by: Sequence[str]
) -> None:
    """The view of one generation: the query's columns, in the query's order."""
    hidden, data = quote_identifier(GENERATION_COLUMN), period_data_table(table)
    if partitioned_by:
        # Spark keeps partition columns after the others: a reader's SELECT * (a UNION by position) would see
        # them moved. The query's analysis (no job) gives its order.
        view = _view_sql(data, [name for name, _ in engine.catalog.query_schema(query_sql)], generation)
    else:
        view = f"SELECT * EXCEPT ({hidden}) FROM {quote(data)} WHERE {_generation_is(generation)}"
    engine.catalog.execute(f"CREATE VIEW IF NOT EXISTS {quote(table)} AS {view}")


def full_table_layout(engine: SparkEngine, table: str) -> str | None:
    """``generations`` or ``table`` (a plain table, the layout before generation tables): how a FULL model's
    physical table is stored; None when it does not exist. A data table left without its view by a crash is found
    by ``create_generation_table`` (its CTAS finds the table there) and mended by ``replace_generation``."""
    kind = engine.catalog.object_type(table)
    if kind is None:
        return None
    return GENERATIONS if kind == "VIEW" else "table"


def replace_generation(engine: SparkEngine, table: str, query_sql: str, checks: RowChecks | None = None) -> int:
    """The table's whole content becomes the query's rows; returns the rows written. The caller holds the table's
    write lock. ``checks`` are counted by the write when the query's columns have the table's types (the table then
    keeps the values counted); else ``checks.holding`` stays empty."""
    data = period_data_table(table)
    typed, previous, has_view = _described(engine, table)
    columns = [name for name, _ in typed]
    listed = [row[0] for row in engine.catalog.query_rows(f"SHOW PARTITIONS {quote(data)}")]  # no writer adds any meanwhile
    generation = new_version()
    select = f"SELECT {_in_table_order(engine, data, columns, listed, generation)} FROM ({query_sql}) AS source"
    # Without its view the types come from the data table, where char(n) reads as string: count nothing then.
    counted = checks if has_view else None
    written = insert_counting(engine.spark, data, select, checks=counted, kept_types=dict(typed))
    if written is None:  # the session did not say: count the new generation's footers
        count = f"SELECT COUNT(*) FROM {quote(data)} WHERE {_generation_is(generation)}"
        written = int(engine.catalog.query_rows(count)[0][0])
    engine.catalog.create_or_alter_view(table, _view_sql(data, columns, generation), known_missing=not has_view)
    _drop_retired(engine, data, listed, current=generation, previous=previous)
    return written


def _in_table_order(engine: SparkEngine, data: str, columns: Sequence[str], listed: Sequence[str], generation: str) -> str:
    """The select list of a generation's rows in the data table's column order (the write matches by position):
    the model's columns, then the partition columns (the generation's, then the model's ``partitioned_by``), whose
    names a listed partition spells (``sparkmesh_generation=.../region=...``); the catalog's when none is listed."""
    if listed:
        partitions = [part.split("=", 1)[0] for part in listed[0].split("/")]
        lowered = {name.lower() for name in partitions}
        order = [name for name in columns if name.lower() not in lowered] + partitions
    else:
        order = [name for name, _ in engine.catalog.columns(data)]
    return ", ".join(
        _generation_literal(generation) if name.lower() == GENERATION_COLUMN else quote_identifier(name)
        for name in order
    )


def _generation_literal(generation: str) -> str:
    return f"{string_literal(generation)} AS {quote_identifier(GENERATION_COLUMN)}"


def _generation_is(generation: str) -> str:
    return f"{quote_identifier(GENERATION_COLUMN)} = {string_literal(generation)}"


def _view_sql(data: str, columns: Sequence[str], generation: str) -> str:
    return f"SELECT {column_list(columns)} FROM {quote(data)} WHERE {_generation_is(generation)}"


def _described(engine: SparkEngine, table: str) -> tuple[list[tuple[str, str]], str | None, bool]:
    """The view's (column, type) pairs, the generation it names, and whether it exists (a crash may have left only
    the data table: then its columns, and no generation)."""
    statement = f"DESCRIBE TABLE EXTENDED {quote(table)}"
    try:
        rows = engine.catalog.query_rows(statement)
    except EngineError as error:
        if error_class(error.__cause__) != "TABLE_OR_VIEW_NOT_FOUND":
            raise
        data_columns = engine.catalog.columns(period_data_table(table))
        return [(name, data_type) for name, data_type in data_columns if name != GENERATION_COLUMN], None, False
    columns = []
    for name, data_type, *_ in rows:
        if not name or name.startswith("#"):
            break
        columns.append((name, data_type))
    text = next((row[1] for row in rows if row[0] == "View Text"), "")
    match = _GENERATION_IN_VIEW.search(text)
    return columns, match.group("generation") if match else None, True


def _drop_retired(engine: SparkEngine, data: str, listed: Sequence[str], *, current: str, previous: str | None) -> None:
    """Drop the generations nobody can be reading: every one but the current and the one it just retired, once
    the grace has passed since that one's write began (it retired the older ones), and at once any generation
    newer than it that no view ever named. ``listed``: the data table's partitions before the write."""
    generations = {partition.split("/", 1)[0].split("=", 1)[1] for partition in listed}
    now_ms = wall_clock_ms()
    grace_ms = int(period_segments.RETIRED_SEGMENT_GRACE.total_seconds() * 1000)
    previous_ms = version_written_at_ms(previous or "")
    droppable = sorted(
        generation for generation in generations - {current, previous}
        if version_written_at_ms(generation) > previous_ms or now_ms - previous_ms >= grace_ms
    )
    for drop in drop_partition_statements(data, [GENERATION_COLUMN], [[g] for g in droppable]):
        engine.catalog.execute(drop)
