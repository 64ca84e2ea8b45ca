"""A model's cron and start as a Dagster time-window partitions definition, and back again.

Partitions must tick exactly where the planner's unit intervals do (``plan.intervals``): a partition key range
is turned into the ``[start, end)`` the executor computes, and the sensor turns missing intervals into ranges.
Both sides take the intervals from ``plan.intervals.interval_cron`` (SQLMesh's interval unit: a ``@weekly`` model has days).
"""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg

from dagster_sparkmesh.clock import to_naive_utc
from dagster_sparkmesh.plan.intervals import IntervalUnit, interval_unit
from dagster_sparkmesh.snapshot.records import Interval

_DATE = "%Y-%m-%d"
_MINUTE = "%Y-%m-%d-%H:%M"


def time_window_partitions(
    cron: str, start: datetime, end: datetime | None = None
) -> dg.TimeWindowPartitionsDefinition:
    """Dagster's named definitions for the common crons (nicer in the UI), a cron definition otherwise.

    ``end`` is exclusive, as the planner's model end bound is.
    """
    unit = interval_unit(cron)
    if unit == IntervalUnit.HOUR:
        return dg.HourlyPartitionsDefinition(start_date=start, end_date=end)
    if unit == IntervalUnit.DAY:
        return dg.DailyPartitionsDefinition(start_date=start, end_date=end)
    if unit == IntervalUnit.WEEK:
        return dg.WeeklyPartitionsDefinition(start_date=start, end_date=end)
    if unit == IntervalUnit.MONTH:
        return dg.MonthlyPartitionsDefinition(start_date=start, end_date=end)
    if unit == IntervalUnit.YEAR:
        return dg.TimeWindowPartitionsDefinition(start=start, end=end, cron_schedule="0 0 1 1 *", fmt="%Y")
    return dg.TimeWindowPartitionsDefinition(start=start, end=end, cron_schedule=cron, fmt=_key_format(cron))


def _key_format(cron: str) -> str:
    """Day keys when every tick is at midnight, minute keys otherwise (keys must be unique per window)."""
    minute, hour = cron.split()[:2]
    return _DATE if (minute, hour) == ("0", "0") else _MINUTE


def to_interval(window: dg.TimeWindow) -> Interval:
    """A Dagster time window (tz-aware) as the naive-UTC interval the planner and executor use."""
    return Interval(start=to_naive_utc(window.start), end=to_naive_utc(window.end))


def key_range_for(partitions_def: dg.TimeWindowPartitionsDefinition, interval: Interval) -> dg.PartitionKeyRange:
    """The partition keys that exactly cover ``interval`` (its ends fall on partition boundaries)."""
    window = dg.TimeWindow(start=_aware_utc(interval.start), end=_aware_utc(interval.end))
    return partitions_def.get_partition_key_range_for_time_window(window)


def _aware_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
