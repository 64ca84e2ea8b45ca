"""A model's cron in Dagster's terms: the 5-field expression, its longest period, and the automation condition
that runs a model when it is due (SQLMesh's ``run``)."""

from __future__ import annotations

import warnings
from datetime import timedelta
from functools import lru_cache

import dagster as dg

from dagster_sparkmesh.model.interval_units import tick_gaps
from dagster_sparkmesh.plan.intervals import IntervalUnit, Schedule

_FIELDS = {
    IntervalUnit.HOUR: "0 * * * *",
    IntervalUnit.DAY: "0 0 * * *",
    IntervalUnit.WEEK: "0 0 * * 0",
    IntervalUnit.MONTH: "0 0 1 * *",
    IntervalUnit.YEAR: "0 0 1 1 *",
}
_FIXED = {IntervalUnit.HOUR: timedelta(hours=1), IntervalUnit.DAY: timedelta(days=1), IntervalUnit.WEEK: timedelta(days=7)}
_VARYING = {
    IntervalUnit.MONTH: (timedelta(days=28), timedelta(days=31)),
    IntervalUnit.YEAR: (timedelta(days=365), timedelta(days=366)),
}


def dagster_cron(cron: str) -> str:
    """``@daily`` and friends as the 5-field expressions Dagster's cron parsing takes everywhere."""
    schedule = Schedule.of(cron)
    return _FIELDS.get(schedule.unit, schedule.cron)


def longest_period(cron: str) -> timedelta:
    """The longest gap between two ticks: a model is late only once a whole period has passed."""
    return periods(cron)[1]


def periods(cron: str) -> tuple[timedelta, timedelta]:
    """The shortest and the longest gap between two ticks (other crons: a sample of their ticks)."""
    schedule = Schedule.of(cron)
    if schedule.unit in _FIXED:
        return _FIXED[schedule.unit], _FIXED[schedule.unit]
    if schedule.unit in _VARYING:
        return _VARYING[schedule.unit]
    return tick_gaps(cron)


@lru_cache(maxsize=256)
def cron_freshness(cron: str, zone: str | None = None) -> dg.FreshnessPolicy:
    """Late once an interval is one period overdue. A regular cron: ``FreshnessPolicy.cron`` (deadline = the cron,
    one period of grace). A cron whose periods vary (monthly, weekdays only) cannot have that grace (Dagster wants
    it within the shortest period): a time window of two longest periods instead. One shared policy per cron:
    building one walks a thousand ticks to validate it (12 ms; 12 s for a 1,000-model project)."""
    shortest, longest = periods(cron)
    if shortest == longest:
        return dg.FreshnessPolicy.cron(deadline_cron=dagster_cron(cron), lower_bound_delta=longest, timezone=zone or "UTC")
    return dg.FreshnessPolicy.time_window(fail_window=2 * longest, warn_window=longest)


def cron_condition(cron: str, every_interval: bool = True, zone: str | None = None) -> dg.AutomationCondition:
    """``on_cron`` whose parents may be external assets: those are never materialized in Dagster, and the step
    itself leaves an interval missing when an input is not there yet. A cron that ticks less often than its
    intervals (``every_interval`` false; ``@weekly``: daily partitions) requests the partitions of its whole period
    at each tick. ``zone``: the cron's (SQLMesh's ``cron_tz``); None: UTC."""
    with warnings.catch_warnings():  # ``include_sources`` is marked beta; it is how external assets are selected
        warnings.simplefilter("ignore", dg.BetaWarning)
        external = dg.AssetSelection.all(include_sources=True) - dg.AssetSelection.all()
    timezone = zone or "UTC"
    tick = dg.AutomationCondition.cron_tick_passed(cron, timezone).since_last_handled()
    if every_interval:
        return (
            dg.AutomationCondition.in_latest_time_window()
            & tick
            & dg.AutomationCondition.all_deps_updated_since_cron(cron, timezone).ignore(external)
        ).with_label(f"on_cron({cron}{_in(zone)})")
    # The period's partitions still missing, whose parents' partitions are there (updated before the tick, most of
    # them: a daily parent's Monday): a @weekly model's seven days at each Sunday tick.
    return (
        dg.AutomationCondition.in_latest_time_window(longest_period(cron))
        & dg.AutomationCondition.missing()
        & tick
        & ~dg.AutomationCondition.any_deps_missing().ignore(external)
        & ~dg.AutomationCondition.any_deps_in_progress()
    ).with_label(f"on_cron({cron}{_in(zone)}), every missing interval of its period")


def _in(zone: str | None) -> str:
    return f", {zone}" if zone else ""
