"""Time intervals of a model's data: cron-aligned units, what is missing, and how work is batched.

Every datetime here is naive UTC. Intervals are half-open ``[start, end)``; a model's unit intervals run from
one cron tick to the next. Only complete intervals are expected: an interval that ends after the plan's end
is not computed yet (its data may still arrive), unless the model has ``allow_partials``; its partial interval is
recorded as what it is, and computed again whole once complete.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

from croniter import croniter

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.model.cron_zones import last_tick_in_zone
from dagster_sparkmesh.model.interval_units import INTERVAL_UNIT_CRONS, TICKS_ON_UNIT, unit_cron, unit_name
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.snapshot.records import Interval


class IntervalUnit(str, Enum):
    HOUR = "hour"
    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    YEAR = "year"
    CRON = "cron"
    """Any other 5-field cron: ticks come from croniter."""


# The aliases and the 5-field crons that mean the same thing (weeks start on Sunday, as in cron).
_UNITS = {
    "@hourly": IntervalUnit.HOUR,
    "0 * * * *": IntervalUnit.HOUR,
    "@daily": IntervalUnit.DAY,
    "@midnight": IntervalUnit.DAY,
    "0 0 * * *": IntervalUnit.DAY,
    "@weekly": IntervalUnit.WEEK,
    "0 0 * * 0": IntervalUnit.WEEK,
    "@monthly": IntervalUnit.MONTH,
    "0 0 1 * *": IntervalUnit.MONTH,
    "@yearly": IntervalUnit.YEAR,
    "@annually": IntervalUnit.YEAR,
    "0 0 1 1 *": IntervalUnit.YEAR,
}


def interval_unit(cron: str) -> IntervalUnit:
    """The unit of a cron expression; raise PlanError if it is not a valid cron."""
    normalized = " ".join(cron.split()).lower()
    if normalized in _UNITS:
        return _UNITS[normalized]
    if len(normalized.split()) != 5 or not croniter.is_valid(normalized):
        raise PlanError(
            f"invalid cron {cron!r}",
            snippet=cron,
            hint="use @hourly, @daily, @weekly, @monthly, @yearly or a 5-field cron such as '0 */6 * * *'",
        )
    return IntervalUnit.CRON


@dataclass(frozen=True)
class Schedule:
    """The ticks of one cron expression: ``floor`` to the tick at or before a moment, ``next`` tick after one."""

    cron: str
    unit: IntervalUnit

    @classmethod
    def of(cls, cron: str) -> Schedule:
        return cls(cron=" ".join(cron.split()).lower(), unit=interval_unit(cron))

    def floor(self, moment: datetime) -> datetime:
        day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        match self.unit:
            case IntervalUnit.HOUR:
                return moment.replace(minute=0, second=0, microsecond=0)
            case IntervalUnit.DAY:
                return day
            case IntervalUnit.WEEK:
                return day - timedelta(days=(day.weekday() + 1) % 7)
            case IntervalUnit.MONTH:
                return day.replace(day=1)
            case IntervalUnit.YEAR:
                return day.replace(month=1, day=1)
        minute = moment.replace(second=0, microsecond=0)
        if croniter.match(self.cron, minute):
            return minute
        return croniter(self.cron, minute).get_prev(datetime)

    def next(self, tick: datetime) -> datetime:
        """The first tick strictly after ``tick``."""
        match self.unit:
            case IntervalUnit.HOUR:
                return self.floor(tick) + timedelta(hours=1)
            case IntervalUnit.DAY:
                return self.floor(tick) + timedelta(days=1)
            case IntervalUnit.WEEK:
                return self.floor(tick) + timedelta(days=7)
            case IntervalUnit.MONTH:
                start = self.floor(tick)
                return start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
            case IntervalUnit.YEAR:
                return self.floor(tick).replace(year=tick.year + 1)
        return croniter(self.cron, tick).get_next(datetime)

    def previous(self, tick: datetime) -> datetime:
        """The last tick strictly before ``tick``."""
        floor = self.floor(tick)
        if floor < tick:
            return floor
        return self.floor(tick - timedelta(microseconds=1))


def interval_cron(model: Model) -> str:
    """The cron of a model's intervals: its ``interval_unit``'s, else the one its cron implies (``unit_cron``)."""
    return INTERVAL_UNIT_CRONS[model.interval_unit] if model.interval_unit else unit_cron(model.cron)


def interval_unit_name(model: Model) -> str:
    """SQLMesh's name of the model's interval unit (``day``, ``hour``...), written or inferred from the cron."""
    return unit_name(interval_cron(model))


def due_on_every_interval(model: Model) -> bool:
    """Whether the model's cron ticks exactly where its intervals end, so that every complete interval is due (a
    cron in another zone than UTC ticks elsewhere: its intervals are UTC's)."""
    return model.cron_tz is None and ticks_on_its_unit(model.cron) and interval_cron(model) == unit_cron(model.cron)


def last_tick(model: Model, moment: datetime) -> datetime:
    """The model's cron's last tick at or before ``moment`` (naive UTC), in the cron's zone (``cron_tz``)."""
    if model.cron_tz is None:
        return Schedule.of(model.cron).floor(moment)
    return last_tick_in_zone(model.cron, moment, model.cron_tz)


def daily_or_longer(model: Model) -> bool:
    """Whether a new table of the model is laid out by month rather than by day (period tables, Iceberg's time
    transform): its written ``interval_unit``'s length, else its cron's own (the layout tables had before interval
    units, kept for new tables of the same models)."""
    unit = interval_unit(interval_cron(model) if model.interval_unit else model.cron)
    return unit in (IntervalUnit.DAY, IntervalUnit.WEEK, IntervalUnit.MONTH, IntervalUnit.YEAR)


def ticks_on_its_unit(cron: str) -> bool:
    """Whether the cron ticks exactly where its intervals end (``@daily``, ``@hourly``, ``*/15 * * * *``...)."""
    normalized = " ".join(cron.split()).lower()
    return normalized in TICKS_ON_UNIT or normalized == unit_cron(normalized)


def expected_intervals(cron: str, start: datetime, end: datetime, *, partial: bool = False) -> list[Interval]:
    """The complete unit intervals from the tick at or before ``start`` to ``end`` (exclusive); ``partial``
    (SQLMesh's ``allow_partials``): then the part of the next one before ``end``, if any.

    ``start`` is floored so that ``--start 2024-01-01 12:00`` on a daily model still includes that day.
    """
    schedule = Schedule.of(cron)
    result: list[Interval] = []
    tick = schedule.floor(start)
    while True:
        following = schedule.next(tick)
        if following > end:
            if partial and tick < end:
                result.append(Interval(start=tick, end=end))
            return result
        result.append(Interval(start=tick, end=following))
        tick = following


def batches(intervals: Iterable[Interval], batch_size: int | None) -> list[Interval]:
    """Contiguous ranges of at most ``batch_size`` unit intervals each (no limit when None or 0)."""
    result: list[Interval] = []
    run: list[Interval] = []
    for interval in sorted(intervals):
        contiguous = run and run[-1].end == interval.start
        if run and (not contiguous or (batch_size and len(run) >= batch_size)):
            result.append(Interval(start=run[0].start, end=run[-1].end))
            run = []
        run.append(interval)
    if run:
        result.append(Interval(start=run[0].start, end=run[-1].end))
    return result


def with_lookback(missing: Iterable[Interval], cron: str, lookback: int, earliest: datetime) -> list[Interval]:
    """``missing`` plus the ``lookback`` unit intervals before each one (not before ``earliest``).

    Late-arriving rows land in recent intervals, so computing an interval recomputes the ones just before it.
    """
    schedule = Schedule.of(cron)
    result = set(missing)
    for interval in list(result):
        start = interval.start
        for _ in range(lookback):
            previous = schedule.previous(start)
            if previous < earliest:
                break
            result.add(Interval(start=previous, end=start))
            start = previous
    return sorted(result)
