"""Period tables: the layout of an INCREMENTAL_BY_TIME_RANGE model's rows, and interval writes into it.

Spark pays for every partition folder it writes (a file writer, a task commit and a rename each: 10-15 ms on a
local disk, more on object stores), so a table partitioned by a daily time column costs 90 folders for a 90-day
backfill, 3-4x a plain CTAS of the same rows (``bench/partition_costs.py``). A period table partitions the rows by a
coarser *period* of the time column, a month for models whose intervals are days or longer and a day for shorter
ones, kept in a hidden column (``sparkmesh_month`` / ``sparkmesh_day``: its name says the period) of the data
table ``<physical>__data``. The physical table that everything else reads (children's queries, audits, table
diffs, the environments' views) is a view over it selecting the model's columns only, so the hidden column is
seen nowhere else.

An interval write replaces exactly the interval (architecture invariant 3) without changing a file a reader may be
reading: it writes new immutable *segments* (``engine.period_segments``: the rows of a range inside one period)
and switches the physical view to them in one ``ALTER VIEW``. When no current segment overlaps the interval (a
backfill into a new table, a daily run's new day) the query's rows are written straight, in one statement; else
the overlapping segments' rows outside the interval are written with them into the new segment. A crash before
the switch leaves the view as it was and the interval unrecorded. Writes into one table take turns
(``state.write_locks``): two writes planned from the same view would each retire the other's segment.
"""

from __future__ import annotations

from dataclasses import dataclass

from dagster_sparkmesh.engine.counted_writes import RowChecks, insert_counting
from dagster_sparkmesh.engine import period_segments
from dagster_sparkmesh.engine.partition_sql import (
    TimeWindow, column_list, drop_partition_statements, rebalance_hint,
)
from dagster_sparkmesh.engine.period_segments import (
    Segment, SegmentWrite, current_values, droppable_segments, new_version, parse_segment, plan_segment_write,
    segment_list, segment_of_rows, view_sql, wall_clock_ms,
)
from dagster_sparkmesh.engine.table_statements import TableStatements
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.snapshot.naming import period_data_table, quote, quote_identifier

PERIODS = ("month", "day")
PERIOD_TIME_TYPES = ("date", "timestamp", "timestamp_ntz")
"""Time column types a period is derived from; a string or integer time column keeps day partitions of its own
values (a value its format cannot parse would have no period, and could never be cleared)."""
_PERIOD_COLUMN_PREFIX = "sparkmesh_"
# No leading underscore: the Hive metastore's partition filter parser refuses such a name
# (INTERNAL_ERROR_HIVE_METASTORE_PARTITION_FILTER), and every filtered read of the table would fail.


HIDDEN_COLUMN_COMMENT = "sparkmesh: dropped by a forward-only change"
"""The comment of a data table column a forward-only change dropped (``engine.column_additions``): the physical
view no longer shows it and writes leave it NULL (Spark cannot drop a column of a Parquet table)."""


@dataclass(frozen=True)
class PeriodLayout:
    """A period table: the model's (column, type) pairs in table order, and the period of its partitions;
    ``hidden``: data table columns a forward-only change dropped, written NULL and shown nowhere."""

    columns: tuple[tuple[str, str], ...]
    period: str
    hidden: tuple[str, ...] = ()
    data_order: tuple[tuple[str, str], ...] = ()
    """Every column of the data table (shown and hidden) in its order; empty: the shown columns are all."""
    pads_strings: bool = False
    """A ``char(n)`` column (which the catalog reports as ``string``) pads the strings written into it."""

    @property
    def period_column(self) -> str:
        return period_column(self.period)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.columns]

    def type_of(self, column: str) -> str:
        return dict(self.columns)[column]

    def data_select(self) -> str:
        """The data table's columns (hidden ones NULL) from a query that has the shown ones, in table order."""
        ordered = self.data_order or self.columns
        return ", ".join(
            f"CAST(NULL AS {data_type}) AS {quote_identifier(name)}" if name in self.hidden else quote_identifier(name)
            for name, data_type in ordered
        )

    @property
    def data_names(self) -> list[str]:
        return [name for name, _ in self.data_order or self.columns]


def period_column(period: str) -> str:
    return f"{_PERIOD_COLUMN_PREFIX}{period}"


def layout_from_catalog(columns: list[tuple[str, str, bool, str | None]]) -> PeriodLayout | None:
    """The layout of a data table listed as (name, type, is partition, comment), or None if it is no period
    table."""
    partitions = [name for name, _, is_partition, _ in columns if is_partition]
    period = next((p for p in PERIODS if partitions == [period_column(p)]), None)
    if period is None:
        return None
    data = [(name, data_type, comment) for name, data_type, is_partition, comment in columns if not is_partition]
    hidden = tuple(name for name, _, comment in data if comment == HIDDEN_COLUMN_COMMENT)
    shown = tuple((name, data_type) for name, data_type, _ in data if name not in hidden)
    order = tuple((name, data_type) for name, data_type, _ in data) if hidden else ()
    return PeriodLayout(shown, period, hidden, order)


def create_period_table(tables: TableStatements, table: str, layout: PeriodLayout, *, empty_view: bool = False) -> bool:
    """The data table (empty); True if this call created it. The physical view over it is created by the first
    write's switch (``empty_view``: now, naming no segment, for a query that reads its own table), so the physical
    table is never seen before its data table (architecture invariant 2), nor, empty, before its first rows."""
    _refuse_hidden_name(table, layout)
    hidden = layout.period_column
    data = period_data_table(table)
    typed = (*layout.columns, (hidden, "string"))
    columns = ", ".join(f"{quote_identifier(name)} {data_type}" for name, data_type in typed)
    created = tables.create_empty_table(
        data, f"CREATE TABLE {quote(data)} ({columns}) USING parquet PARTITIONED BY ({quote_identifier(hidden)})"
    )
    if empty_view:
        empty = view_sql(data, column_list(layout.names), hidden, [])
        tables.catalog.execute(f"CREATE VIEW IF NOT EXISTS {quote(table)} AS {empty}")
    return created


def create_period_table_with_rows(
    tables: TableStatements, table: str, query_sql: str, window: TimeWindow, layout: PeriodLayout, *,
    checks: RowChecks | None = None,
) -> int | None:
    """A new period table whose first segments hold the query's rows of ``[start, end)``, created by the write
    itself (one CTAS: no empty table registered first, no second analysis of the query), then its view. Returns
    the rows written; None when the data table is there already (another writer's, or a crash's before its view):
    write with ``overwrite_period_interval`` then. The caller holds the table's write lock, so no other writer
    is between the CTAS's files and its registration. The table takes the query's own types; ``layout`` gives
    the column names and the time column's type."""
    _refuse_hidden_name(table, layout)
    data = period_data_table(table)
    plan = plan_segment_write([], window.start, window.end, layout.period, new_version())
    select = _segment_rows(data, query_sql, window, layout, plan)
    written = tables.create_table_from_select(data, select, [layout.period_column], checks)
    if written is None:
        return None
    switched = view_sql(data, column_list(layout.names), layout.period_column, plan.current_after)
    tables.catalog.create_or_alter_view(table, switched, known_missing=True)  # after its rows (architecture invariant 2)
    return written


def _refuse_hidden_name(table: str, layout: PeriodLayout) -> None:
    hidden = layout.period_column
    if hidden in layout.names:
        raise EngineError(
            f"the query of {table} has a column named {hidden}, the name of sparkmesh's hidden period column",
            hint="rename the column",
        )


def overwrite_period_interval(
    tables: TableStatements, table: str, query_sql: str, window: TimeWindow, layout: PeriodLayout, *,
    new: bool = False, checks: RowChecks | None = None,
) -> int:
    """Replace exactly the rows of ``[start, end)``; returns the rows the query wrote for it. The caller holds the
    table's write lock: two writes planned from the same current segments would each retire the other's. ``new``:
    the caller created the data table under that lock, so no segment and no view exist yet."""
    data = period_data_table(table)
    text = None if new else tables.catalog.view_text(table)
    has_view = text is not None  # none: a new table, or a crash before its first switch (nothing current)
    named = _segments_named_by(text, layout) if has_view else []
    listed = _listed_segments(tables, data, layout) if named is None else None
    current = named if named is not None else listed
    plan = plan_segment_write(current, window.start, window.end, layout.period, new_version())
    written = _write_segments(tables, data, query_sql, window, layout, plan, checks)
    if not written and not plan.replaced and has_view:
        # No rows and nothing replaced (a daily run's day without data): the view already shows the rows it would
        # show, and keeping its text keeps the table's content token (``engine.content_tokens``) for its readers.
        return 0
    # The switch: one metastore update, so a reader sees the segments before the write or after it, never a mix.
    switched = view_sql(data, column_list(layout.names), layout.period_column, plan.current_after)
    if has_view:
        tables.catalog.alter_view(table, switched)
    else:
        tables.catalog.create_or_alter_view(table, switched, known_missing=True)
    if plan.replaced:  # only a write that retires segments leaves any behind (and a crash, found here too)
        _drop_retired(tables, data, layout, plan, listed)
    return written


def _drop_retired(
    tables: TableStatements, data: str, layout: PeriodLayout, plan: SegmentWrite, listed: list[Segment] | None
) -> None:
    listed = listed if listed is not None else _listed_segments(tables, data, layout)
    now_ms = wall_clock_ms()
    grace = period_segments.RETIRED_SEGMENT_GRACE
    retired = [[segment.value] for segment in droppable_segments(listed, plan.current_after, now_ms, grace)]
    for drop in drop_partition_statements(data, [layout.period_column], retired):
        tables.catalog.execute(drop)


def _write_segments(
    tables: TableStatements, data: str, query_sql: str, window: TimeWindow, layout: PeriodLayout, plan: SegmentWrite,
    checks: RowChecks | None,
) -> int:
    """Append the new segments (no reader sees them before the switch); returns the query's rows in the window."""
    in_window = window.predicate(layout.type_of(window.column))
    select = _segment_rows(data, query_sql, window, layout, plan)
    # Checks are counted only when the query's types are the table's: the table then keeps the values counted
    # (not with a char(n) column, which pads them: its type reads as string on both sides).
    counted = None if layout.pads_strings else checks
    written = insert_counting(
        tables.spark, data, select, counted=in_window, checks=counted, kept_types=dict(layout.columns)
    )
    if written is not None:
        return written
    hidden = quote_identifier(layout.period_column)
    count = f"SELECT COUNT(*) FROM {quote(data)} WHERE {hidden} IN ({segment_list(plan.written)}) AND {in_window}"
    return int(tables.catalog.query_rows(count)[0][0])


def _segment_rows(data: str, query_sql: str, window: TimeWindow, layout: PeriodLayout, plan: SegmentWrite) -> str:
    """The rows of the new segments: the query's rows in the window, and the replaced segments' rows outside it."""
    hidden = quote_identifier(layout.period_column)
    in_window = window.predicate(layout.type_of(window.column))
    segment = segment_of_rows(window.column, layout.period, plan.written)
    rows = f"SELECT {layout.data_select()}, {segment} AS {hidden} FROM ({query_sql}) AS source WHERE {in_window}"
    if plan.replaced:
        rows += (
            f" UNION ALL SELECT {column_list(layout.data_names)}, {segment} AS {hidden} FROM {quote(data)} "
            f"WHERE {hidden} IN ({segment_list(plan.replaced)}) AND NOT ({in_window})"
        )
    hint = rebalance_hint(layout.period_column) if len(plan.written) > 1 else ""
    return f"SELECT {hint}* FROM ({rows}) AS segment_rows"


def _listed_segments(tables: TableStatements, data: str, layout: PeriodLayout) -> list[Segment]:
    """Every segment the data table holds, from the metastore (no Spark job)."""
    prefix = f"{layout.period_column}="
    values = [row[0][len(prefix):] for row in tables.catalog.query_rows(f"SHOW PARTITIONS {quote(data)}")]
    # A NULL segment (Hive's __HIVE_DEFAULT_PARTITION__) cannot occur: every row written maps to a touched period.
    return [parse_segment(value, layout.period) for value in values if value[:1].isdigit()]


def _segments_named_by(view_text: str, layout: PeriodLayout) -> list[Segment] | None:
    """The segments the physical view names now; None for a view of the whole data table (the first period
    layout's, where every partition is current)."""
    values = current_values(view_text)
    return None if values is None else sorted(parse_segment(value, layout.period) for value in values)
