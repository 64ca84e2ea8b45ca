"""A model's intervals are SQLMesh's interval unit (the longest of year, month, day, hour, 30, 15 and 5 minutes that
fits between two ticks of its cron); the cron only says when they are due. SQLMesh 0.236.4 is the referee: on a
project of these crons (``bench/sqlmesh_spark``, README of bench, "Crons that tick less often than their
intervals"), its rows and these plans' agree."""

from __future__ import annotations

from datetime import datetime as dt

import pytest

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.plan.intervals import ticks_on_its_unit, unit_cron
from dagster_sparkmesh.plan.ranged import backfill_in_window
from dagster_sparkmesh.snapshot.fingerprint import data_hash
from dagster_sparkmesh.snapshot.records import Interval

WEEKLY_FROM_WEDNESDAY = {"cron": "@weekly", "start": "2024-01-03"}


def _days(first: int, last: int) -> tuple[Interval, ...]:
    return tuple(Interval(start=dt(2024, 1, d), end=dt(2024, 1, d + 1)) for d in range(first, last + 1))


@pytest.mark.parametrize(
    ("cron", "unit", "on_its_unit"),
    [
        ("@daily", "@daily", True),
        ("0 0 * * *", "@daily", True),
        ("@weekly", "@daily", False),
        ("30 2 * * *", "@daily", False),
        ("0 0 * * 1-5", "@daily", False),
        ("0 0 1,15 * *", "@daily", False),
        ("@hourly", "@hourly", True),
        ("0 */6 * * *", "@hourly", False),
        ("*/15 * * * *", "*/15 * * * *", True),
        ("*/20 * * * *", "*/15 * * * *", False),
        ("@monthly", "@monthly", True),
        ("0 0 1 1,7 *", "@monthly", False),
        ("@yearly", "@yearly", True),
    ],
)
def test_the_interval_unit_is_the_longest_that_fits_between_two_ticks(cron, unit, on_its_unit):
    assert (unit_cron(cron), ticks_on_its_unit(cron)) == (unit, on_its_unit)


def test_a_cron_ticking_more_often_than_every_five_minutes_is_refused_as_in_sqlmesh():
    with pytest.raises(PlanError, match="more often than every 5 minutes") as error:
        unit_cron("*/2 * * * *")
    assert "*/5 * * * *" in error.value.hint


def test_a_weekly_model_computes_its_days_from_its_start_up_to_the_last_sunday(world, model):
    # Execution time: Wednesday 2024-01-10 06:30. The week starting Sunday 2023-12-31 is not computed from
    # that Sunday (before the start), and Monday to Tuesday of this week are not due until next Sunday.
    weekly = model("s.weekly", "SELECT id, ds FROM src.events", ["src.events"], **WEEKLY_FROM_WEDNESDAY)
    plan = world.apply(weekly)
    assert plan.missing_intervals == {"s.weekly": _days(3, 6)}
    assert world.spark_rows("SELECT MIN(ds), MAX(ds), COUNT(*) FROM s.weekly") == [
        (dt(2024, 1, 3).date(), dt(2024, 1, 6).date(), 4)
    ]

    later = world.plan(weekly, execution_time=dt(2024, 1, 14, 0, 5))  # the next Sunday: its seven days
    assert later.missing_intervals == {"s.weekly": _days(7, 13)}


def test_an_explicit_end_stops_before_the_last_tick_or_at_it(world, model):
    weekly = model("s.weekly", "SELECT id, ds FROM src.events", ["src.events"], **WEEKLY_FROM_WEDNESDAY)
    before_sunday = world.plan(weekly, end="2024-01-05", execution_time=dt(2024, 1, 10, 6, 30))
    assert before_sunday.missing_intervals == {"s.weekly": _days(3, 4)}
    past_sunday = world.plan(weekly, end="2024-01-09", execution_time=dt(2024, 1, 10, 6, 30))
    assert past_sunday.missing_intervals == {"s.weekly": _days(3, 6)}  # as SQLMesh: not past the execution's tick


def test_no_model_computes_an_interval_that_ends_after_the_execution_time(world, model):
    # An end past "now" (the Python API takes one) stops at the execution time: today's rows are not all there,
    # and a recorded interval would never be computed again. SQLMesh's plan refuses such an end (the CLI too).
    daily = model("s.daily", "SELECT id, ds FROM src.events", ["src.events"], cron="@daily", start="2024-01-03")
    hourly = model("s.hourly", "SELECT id, ds FROM src.events", ["src.events"], cron="@hourly", start="2024-01-05")
    plan = world.plan(daily, hourly, end="2024-01-09", execution_time=dt(2024, 1, 5, 2, 30))
    assert plan.missing_intervals["s.daily"] == _days(3, 4)
    assert [i.end for i in plan.missing_intervals["s.hourly"]] == [dt(2024, 1, 5, 1), dt(2024, 1, 5, 2)]


def test_other_crons_compute_whole_units_up_to_their_last_tick(world, model):
    six_hourly = model("s.six_hourly", "SELECT id, ds FROM src.events", ["src.events"], cron="0 */6 * * *",
                       start="2024-01-09")
    at_half_past_two = model("s.at_half_past_two", "SELECT id, ds FROM src.events", ["src.events"],
                             cron="30 2 * * *", start="2024-01-07")
    plan = world.plan(six_hourly, at_half_past_two, execution_time=dt(2024, 1, 9, 13, 10))
    assert plan.missing_intervals["s.six_hourly"] == tuple(
        Interval(start=dt(2024, 1, 9, h), end=dt(2024, 1, 9, h + 1)) for h in range(12)
    )  # hourly intervals up to the 12:00 tick
    assert plan.missing_intervals["s.at_half_past_two"] == _days(7, 8)  # due at 02:30: midnight-aligned days
    before_the_tick = world.plan(six_hourly, at_half_past_two, execution_time=dt(2024, 1, 9, 2, 0))
    assert before_the_tick.missing_intervals["s.at_half_past_two"] == _days(7, 7)


def test_a_step_of_partitions_a_person_chose_computes_them_before_the_cron_is_due(world, model):
    weekly = model("s.weekly", "SELECT id, ds FROM src.events", ["src.events"], **WEEKLY_FROM_WEDNESDAY)
    plan = world.plan(weekly)
    chosen = backfill_in_window(plan, world.project(weekly), world.state, models=None, start=dt(2024, 1, 8),
                                end=dt(2024, 1, 10), now=dt(2024, 1, 10, 6, 30), prepared=True)
    assert chosen.intervals == {"s.weekly": _days(8, 9)}  # Monday and Tuesday: complete, not due by the cron


def test_an_interval_unit_shorter_than_the_cron_computes_its_units_when_the_cron_is_due(world, model):
    hours = model("s.hours", "SELECT id, ds FROM src.events", ["src.events"], cron="@daily", interval_unit="hour",
                  start="2024-01-09")
    plan = world.plan(hours)  # Wednesday 06:30: due at midnight, so the 24 hours of Tuesday
    assert plan.missing_intervals == {"s.hours": tuple(
        Interval(start=dt(2024, 1, 9, h), end=dt(2024, 1, 9, h + 1) if h < 23 else dt(2024, 1, 10)) for h in range(24)
    )}


def test_an_interval_unit_longer_than_the_cron_is_refused_as_in_sqlmesh(world, model):
    days = model("s.days", "SELECT id, ds FROM src.events", ["src.events"], cron="@hourly", interval_unit="day")
    with pytest.raises(PlanError, match="ticks more often than the interval unit 'day'") as error:
        world.plan(days)
    assert "hour" in error.value.hint and error.value.path == days.path
    partial = days.model_copy(update={"allow_partials": True})  # SQLMesh's way out: each tick, the day so far
    assert world.plan(partial).missing_intervals["s.days"][-1] == Interval(start=dt(2024, 1, 10), end=dt(2024, 1, 10, 6))


def test_an_interval_unit_is_part_of_the_data_hash_only_when_it_is_not_the_one_the_cron_implies(model):
    plain = model("s.m", "SELECT id, ds FROM src.events", ["src.events"])
    assert data_hash(plain) != data_hash(plain.model_copy(update={"interval_unit": "hour"}))
    # A migrated project's `interval_unit 'day'` on its daily models makes no new versions.
    assert data_hash(plain) == data_hash(plain.model_copy(update={"interval_unit": "day"}))
    assert data_hash(plain) == data_hash(model("s.m", "SELECT id, ds FROM src.events", ["src.events"], cron="@hourly"))


def test_a_unique_key_model_recorded_on_its_old_tick_aligned_intervals_is_not_rebuilt_whole():
    # Before interval units, `30 2 * * *` recorded days from 02:30 to 02:30; the next whole day overlaps the last.
    from dagster_sparkmesh.plan.restatements import RestatementInputs, filled_behind
    from tests.plan.conftest import make_model

    keyed = make_model("s.u", "SELECT id, ds FROM src.events", ["src.events"], cron="30 2 * * *",
                       kind={"name": "INCREMENTAL_BY_UNIQUE_KEY", "unique_key": ["id"]})
    recorded = [Interval(start=dt(2023, 12, 31, 2, 30), end=dt(2024, 1, 10, 2, 30))]  # from the tick before its start
    window = Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 11))
    assert filled_behind(RestatementInputs({"s.u": keyed}, {"s.u": window}, {"s.u": recorded})) == {}
    behind = [Interval(start=dt(2024, 1, 5), end=dt(2024, 1, 10))]  # asked for days before what it holds: rebuilt
    assert filled_behind(RestatementInputs({"s.u": keyed}, {"s.u": window}, {"s.u": behind})) == {
        "s.u": Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))
    }


def test_a_restatement_clears_the_days_since_the_last_tick_too(world, model):
    # What a Dagster step of a person's partitions computed after Sunday is restated with the rest (SQLMesh clears
    # every interval in the restated range), and computed again with it.
    weekly = model("s.weekly", "SELECT id, ds FROM src.events", ["src.events"], **WEEKLY_FROM_WEDNESDAY)
    applied = world.apply(weekly)
    monday_tuesday = Interval(start=dt(2024, 1, 7), end=dt(2024, 1, 10))  # what a Dagster step of them recorded
    world.state.add_intervals("s.weekly", applied.version_of("s.weekly"), [monday_tuesday])
    plan = world.plan(weekly, restate_models=["s.weekly"])
    assert plan.restatements["s.weekly"] == Interval(start=dt(2024, 1, 3), end=dt(2024, 1, 10))
    assert plan.missing_intervals == {"s.weekly": _days(3, 9)}  # what was recorded is computed again


def test_a_step_of_one_model_without_a_start_starts_with_the_projects_earliest_model(world, model):
    # A Dagster step of a FULL model alone: its default start is the project's earliest, not "yesterday" (it
    # recorded one day and left the promotion refused for the others).
    parent = model("s.parent", "SELECT id, ds FROM src.events", ["src.events"], start="2024-01-07")
    full = model("s.full", "SELECT COUNT(*) AS n FROM s.parent", ["s.parent"], kind={"name": "FULL"}, start=None)
    plan = world.plan(parent, full)
    step = backfill_in_window(plan, world.project(parent, full), world.state, models=["s.full"], start=None,
                              end=None, now=dt(2024, 1, 10, 6, 30), prepared=True)
    assert step.intervals == {"s.full": _days(7, 9)}
