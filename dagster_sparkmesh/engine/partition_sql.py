"""Pure SQL builders for partition work: the time window of an interval and listed DROP PARTITION statements.

Spark compares a time column with the interval bounds according to the column's type: timestamps and dates
against TIMESTAMP literals (intervals are naive UTC, and every session runs in UTC), strings and integers against
the bounds formatted with the model's ``time_column_format`` (``yyyy-MM-dd``, ``yyyyMMdd``, ``yyyy-MM-dd HH``...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from dagster_sparkmesh.snapshot.naming import quote, quote_identifier

# Spark rejects very long statements badly and Hive drops partitions one metastore call each anyway.
DROP_BATCH = 100
_INTEGER_TYPES = ("tinyint", "smallint", "int", "bigint")
_TIME_TYPES = ("date", "timestamp", "timestamp_ntz")


def string_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def timestamp_literal(moment: datetime) -> str:
    return f"TIMESTAMP '{moment.isoformat(sep=' ')}'"


@dataclass(frozen=True)
class TimeWindow:
    """The half-open interval ``[start, end)`` of an interval write, on a model's time column."""

    column: str
    start: datetime
    end: datetime
    time_format: str = "yyyy-MM-dd"
    """How a string (or integer) time column spells its periods, in Spark's datetime pattern."""
    period: str | None = None
    """The partition period of a new table (``engine.period_tables``): ``month`` or ``day``; None: the time column."""

    @property
    def single_day(self) -> str | None:
        """``yyyy-MM-dd`` when the window is exactly one calendar day (midnight to midnight), else None."""
        midnight = self.start == datetime.combine(self.start.date(), datetime.min.time())
        return self.start.date().isoformat() if midnight and self.end - self.start == timedelta(days=1) else None

    @property
    def spans_several_days(self) -> bool:
        return self.end - self.start > timedelta(days=1)

    def predicate(self, data_type: str, column: str | None = None) -> str:
        """The window on ``column`` (default: the time column) of Spark type ``data_type``."""
        return window_predicate(column or self.column, data_type, self.start, self.end, self.time_format)


def window_predicate(column: str, data_type: str, start: datetime, end: datetime, time_format: str) -> str:
    """``column`` within the half-open interval ``[start, end)``, compared in the column's own type. A formatted
    time (string or integer) is compared up to the end's last microsecond, as SQLMesh's ``BETWEEN``: the
    same rows for whole intervals, and a partial interval of a day-formatted column (``allow_partials``) holds its
    day instead of nothing."""
    name = quote_identifier(column)
    lower = _bound(start, data_type, time_format)
    if data_type.lower() in _TIME_TYPES:
        return f"{name} >= {lower} AND {name} < {timestamp_literal(end)}"
    return f"{name} >= {lower} AND {name} <= {_bound(end - timedelta(microseconds=1), data_type, time_format)}"


def _bound(moment: datetime, data_type: str, time_format: str) -> str:
    data_type = data_type.lower()
    if data_type in _TIME_TYPES:
        return timestamp_literal(moment)
    formatted = f"date_format({timestamp_literal(moment)}, {string_literal(time_format)})"
    if data_type in _INTEGER_TYPES:
        return f"CAST({formatted} AS BIGINT)"
    return formatted


def rebalance_hint(partition_column: str) -> str:
    """Group the rows of each partition into few tasks before a write of many partitions.

    Without it every task writes a file into every partition it meets: a 90-day write on two tasks made 180 files,
    and Spark pays ~13 ms per file and partition (writer, commit, rename), 2.6 s against 1.6 s with the hint
    (measured: 90 days x 1,000 rows, local[2]). REBALANCE rather than DISTRIBUTE BY: adaptive execution still
    splits a skewed day into several tasks. A one-day write keeps its plan: the shuffle would only cost there.
    """
    return f"/*+ REBALANCE({quote_identifier(partition_column)}) */ "


def partition_spec(columns: Sequence[str], values: Sequence[str | None]) -> str:
    """``PARTITION (a = 'x', b = '1')``: Spark casts the string values to the partition columns' types."""
    parts = [
        f"{quote_identifier(column)} = {'NULL' if value is None else string_literal(value)}"
        for column, value in zip(columns, values)
    ]
    return f"PARTITION ({', '.join(parts)})"


def drop_partition_statements(table: str, columns: Sequence[str], specs: Sequence[Sequence[str | None]]) -> list[str]:
    """Listed partitions only: range predicates in DROP PARTITION don't parse in Spark."""
    statements = []
    for offset in range(0, len(specs), DROP_BATCH):
        batch = specs[offset : offset + DROP_BATCH]
        listed = ", ".join(partition_spec(columns, values) for values in batch)
        statements.append(f"ALTER TABLE {quote(table)} DROP IF EXISTS {listed}")
    return statements


def column_list(columns: Sequence[str], prefix: str = "") -> str:
    return ", ".join(f"{prefix}{quote_identifier(column)}" for column in columns)
