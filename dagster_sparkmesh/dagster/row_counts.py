"""Row counts for Dagster's ``dagster/partition_row_count`` and ``dagster/row_count``.

A ranged write is one Spark statement, which reports only the range's total. The rows of each partition are
counted afterwards with one grouped query over the range, bucketing the time column by the partitions' unit
(hour, day, month, year: what ``date_trunc`` can express). Weekly and cron partitions, and models not written by
time range, have no per-partition count: their events carry none rather than a wrong one.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from dagster_sparkmesh.clock import to_naive_utc
from dagster_sparkmesh.engine.partition_sql import window_predicate
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.snapshot.naming import quote, quote_identifier

_TRUNC_UNITS: dict[type, str] = {
    dg.HourlyPartitionsDefinition: "HOUR",
    dg.DailyPartitionsDefinition: "DAY",
    dg.MonthlyPartitionsDefinition: "MONTH",
}
_TIME_TYPES = ("date", "timestamp", "timestamp_ntz")


def partition_row_counts(
    engine, model: Model, table: str, partitions_def: dg.PartitionsDefinition, keys: Sequence[str]
) -> dict[str, int] | None:
    """Partition key → rows of ``table`` in it, for the run's ``keys``; None where this cannot be counted."""
    unit = _TRUNC_UNITS.get(type(partitions_def))
    if unit is None or not model.kind.has_time_column or not keys:
        return None
    assert isinstance(partitions_def, dg.TimeWindowPartitionsDefinition)
    starts = {to_naive_utc(partitions_def.time_window_for_partition_key(key).start): key for key in keys}
    end = to_naive_utc(partitions_def.time_window_for_partition_key(keys[-1]).end)
    column = model.kind.time_column  # type: ignore[union-attr]
    data_type = dict(engine.catalog.columns(table)).get(column)
    if data_type is None:
        return None
    value = _as_timestamp(column, data_type, model.kind.time_column_format)  # type: ignore[union-attr]
    where = window_predicate(column, data_type, min(starts), end, model.kind.time_column_format)  # type: ignore[union-attr]
    rows = engine.catalog.query_rows(
        f"SELECT date_trunc('{unit}', {value}) AS bucket, COUNT(*) FROM {quote(table)} WHERE {where} GROUP BY 1"
    )
    counts = dict.fromkeys(keys, 0)  # the whole range was written: a partition without rows has 0 of them
    for bucket, count in rows:
        key = starts.get(to_naive_utc(bucket)) if bucket is not None else None
        if key is not None:
            counts[key] = int(count)
    return counts


def table_row_count(engine, model: Model, table: str, rows_written: int) -> int | None:
    """Rows of an unpartitioned model's table: the write's own count when it rewrote the whole table."""
    if model.kind.rebuilt_each_run and not model.kind.physical_is_view:  # FULL, SEED
        return rows_written
    if model.kind.keeps_history:  # a merge into the kept history: count what the table holds now
        return int(engine.catalog.query_rows(f"SELECT COUNT(*) FROM {quote(table)}")[0][0])
    return None  # a VIEW holds no rows of its own


def _as_timestamp(column: str, data_type: str, time_format: str) -> str:
    name = quote_identifier(column)
    if data_type.lower() in _TIME_TYPES:
        return name
    return f"to_timestamp(CAST({name} AS STRING), '{time_format}')"
