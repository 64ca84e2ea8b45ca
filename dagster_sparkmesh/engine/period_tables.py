"""Period tables: the layout of an INCREMENTAL_BY_TIME_RANGE model's rows, and interval writes into it.

Spark pays for every partition folder it writes (a file writer, a task commit and a rename each: 10-15 ms on a
local disk, more on object stores), so a table partitioned by a daily time column costs 90 folders for a 90-day
backfill, 3-4x a plain CTAS of the same rows (``bench/partition_costs.py``). A period table partitions the rows by a
coarser *period* of the time column, a month for models whose intervals are days or longer and a day for shorter
ones, kept in a hidden column (``sparkmesh_month`` / ``sparkmesh_day``: its name says the period) of the data
table ``<physical>__data``. The physical table that everything else reads (children's queries, audits, table
diffs, the environments' views) is a view over it selecting the model's columns only, so the hidden column is
seen nowhere else.

An interval write replaces exactly the interval (DESIGN invariant 3). When no period it touches holds rows yet (a
backfill into a new table, the first day of a month), the query's rows are written straight, in one statement.
Otherwise the touched periods are rewritten: their rows outside the interval, read back from the table, with the
query's rows inside it, computed once and persisted so that the counts and the write see the same rows; a period
left with no row is dropped. The dynamic overwrite writes into a staging folder and swaps the periods at commit,
so a crash leaves each period old or new, and the interval unrecorded. Writes into one table take turns
(``state.write_locks``): two rewrites of one month at once would each drop the other's days.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from pyspark.storagelevel import StorageLevel

from dagster_sparkmesh.engine.failures import spark_errors
from dagster_sparkmesh.engine.partition_sql import (
    TimeWindow, column_list, drop_partition_statements, rebalance_hint,
)
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.snapshot.naming import period_data_table, quote, quote_identifier

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine

PERIODS = ("month", "day")
PERIOD_TIME_TYPES = ("date", "timestamp", "timestamp_ntz")
"""Time column types a period is derived from; a string or integer time column keeps day partitions of its own
values (a value its format cannot parse would have no period, and could never be cleared)."""
_PERIOD_COLUMN_PREFIX = "sparkmesh_"
# No leading underscore: the Hive metastore's partition filter parser refuses such a name
# (INTERNAL_ERROR_HIVE_METASTORE_PARTITION_FILTER), and every filtered read of the table would fail.


@dataclass(frozen=True)
class PeriodLayout:
    """A period table: the model's (column, type) pairs in table order, and the period of its partitions."""

    columns: tuple[tuple[str, str], ...]
    period: str

    @property
    def period_column(self) -> str:
        return period_column(self.period)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.columns]

    def type_of(self, column: str) -> str:
        return dict(self.columns)[column]


def period_column(period: str) -> str:
    return f"{_PERIOD_COLUMN_PREFIX}{period}"


def layout_from_catalog(columns: list[tuple[str, str, bool]]) -> PeriodLayout | None:
    """The layout of a data table listed as (name, type, is partition), or None if it is no period table."""
    partitions = [name for name, _, is_partition in columns if is_partition]
    period = next((p for p in PERIODS if partitions == [period_column(p)]), None)
    if period is None:
        return None
    return PeriodLayout(tuple((n, t) for n, t, is_partition in columns if not is_partition), period)


def period_expression(column: str, period: str) -> str:
    """The period of a date or timestamp ``column``: its first day as ``yyyy-MM-dd`` text, which sorts as the dates
    do and which the metastore filters on (range predicates on the period prune partitions there)."""
    as_date = f"CAST({quote_identifier(column)} AS DATE)"
    first_day = f"TRUNC({as_date}, 'MM')" if period == "month" else as_date
    return f"CAST({first_day} AS STRING)"


def periods_touched(window: TimeWindow, period: str) -> list[date]:
    """The periods that overlap ``[start, end)``, in order (at least one)."""
    first = window.start.date().replace(day=1) if period == "month" else window.start.date()
    periods = [first]
    while True:
        following = _next_period(periods[-1], period)
        if datetime.combine(following, datetime.min.time()) >= window.end:
            return periods
        periods.append(following)


def _next_period(start: date, period: str) -> date:
    if period == "day":
        return start + timedelta(days=1)
    return date(start.year + start.month // 12, start.month % 12 + 1, 1)


def create_period_table(engine: SparkEngine, table: str, layout: PeriodLayout) -> bool:
    """The data table (empty) and the physical view over it; True if this call created the data table.

    The view comes second, so the physical table is never seen before its data table exists (DESIGN invariant 2);
    a crash between the two is mended by the next attempt, which finds the data table and creates the view."""
    hidden = layout.period_column
    if hidden in layout.names:
        raise EngineError(
            f"the query of {table} has a column named {hidden}, the name of sparkmesh's hidden period column",
            hint="rename the column",
        )
    data = period_data_table(table)
    columns = ", ".join(f"{quote_identifier(name)} {data_type}" for name, data_type in (*layout.columns, (hidden, "string")))
    created = engine.create_empty_table(
        data, f"CREATE TABLE {quote(data)} ({columns}) USING parquet PARTITIONED BY ({quote_identifier(hidden)})"
    )
    engine.execute(f"CREATE VIEW IF NOT EXISTS {quote(table)} AS SELECT {column_list(layout.names)} FROM {quote(data)}")
    return created


def overwrite_period_interval(engine: SparkEngine, table: str, query_sql: str, window: TimeWindow, layout: PeriodLayout) -> int:
    """Replace exactly the rows of ``[start, end)``; returns the rows the query wrote for it. The caller holds the
    table's write lock."""
    data = period_data_table(table)
    periods = periods_touched(window, layout.period)
    hidden = quote_identifier(layout.period_column)
    in_window = window.predicate(layout.type_of(window.column))
    in_periods = f"{hidden} >= '{periods[0].isoformat()}' AND {hidden} <= '{periods[-1].isoformat()}'"
    new_rows = (
        f"SELECT {column_list(layout.names)}, {period_expression(window.column, layout.period)} AS {hidden} "
        f"FROM ({query_sql}) AS source WHERE {in_window}"
    )
    hint = rebalance_hint(layout.period_column) if len(periods) > 1 else ""
    existing = _existing_periods(engine, data, layout.period_column) & set(periods)
    if not existing:  # nothing to keep or clear: straight from the query, one statement
        select = f"SELECT {hint}* FROM ({new_rows}) AS new_rows"
        return engine.insert_overwrite_counted(data, select, f"{in_periods} AND {in_window}")
    # Another session (a concurrent run on the same Spark Connect server) may have rewritten these months since
    # this session listed the table's files: list them again, under the write lock, before reading them back.
    engine.execute(f"REFRESH TABLE {quote(data)}")
    kept = (
        f"SELECT {column_list(layout.names)}, {hidden}, FALSE AS sparkmesh_new FROM {quote(data)} "
        f"WHERE {in_periods} AND NOT ({in_window})"
    )
    merged = f"{kept} UNION ALL SELECT *, TRUE AS sparkmesh_new FROM ({new_rows}) AS new_rows"
    view = f"sparkmesh_period_rows_{uuid.uuid4().hex[:12]}"
    with spark_errors(merged):
        frame = engine.spark.sql(merged).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        with spark_errors(merged):
            frame.createOrReplaceTempView(view)
        counts = engine.query_rows(
            f"SELECT {hidden}, COUNT_IF(sparkmesh_new) FROM {quote_identifier(view)} GROUP BY {hidden}"
        )
        if counts:
            engine.execute(
                f"INSERT OVERWRITE TABLE {quote(data)} "
                f"SELECT {hint}{column_list(layout.names)}, {hidden} FROM {quote_identifier(view)}"
            )
    finally:
        engine.drop_temp_view(view)
        frame.unpersist()
    written = {row[0] for row in counts}
    emptied = [[period.isoformat()] for period in sorted(existing) if period.isoformat() not in written]
    for statement in drop_partition_statements(data, [layout.period_column], emptied):
        engine.execute(statement)
    return sum(int(row[1]) for row in counts)


def _existing_periods(engine: SparkEngine, data: str, column: str) -> set[date]:
    """The periods the data table holds, from the metastore (no Spark job)."""
    prefix = f"{column}="
    values = [row[0][len(prefix):] for row in engine.query_rows(f"SHOW PARTITIONS {quote(data)}")]
    # A NULL period (Hive's __HIVE_DEFAULT_PARTITION__) cannot occur: rows are written only inside a window.
    return {date.fromisoformat(value) for value in values if value[:1].isdigit()}
