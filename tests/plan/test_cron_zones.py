"""SQLMesh's ``cron_tz``: the cron ticks in its zone, the intervals stay UTC's. SQLMesh 0.236.4 is the referee on
``bench/cron_tz_project`` (bench README, "Crons in a time zone"); these plans say the same on Spark."""

from __future__ import annotations

from datetime import datetime as dt

import pytest

from dagster_sparkmesh.model.cron_zones import last_tick_in_zone

from dagster_sparkmesh.snapshot.fingerprint import data_hash, metadata_hash
from dagster_sparkmesh.snapshot.records import Interval

QUERY = ("SELECT id, ds FROM src.events", ["src.events"])


def _days(first: int, last: int) -> tuple[Interval, ...]:
    return tuple(Interval(start=dt(2024, 1, d), end=dt(2024, 1, d + 1)) for d in range(first, last + 1))


def test_a_daily_cron_in_los_angeles_makes_a_utc_day_due_at_eight_utc(world, model):
    # Midnight in Los Angeles is 08:00 UTC in January: at 07:00 UTC on the 10th, the 9th is not due yet there.
    zoned = model("s.zoned", *QUERY, cron="@daily", cron_tz="America/Los_Angeles", start="2024-01-07")
    utc = model("s.utc", *QUERY, cron="@daily", start="2024-01-07")
    before = world.plan(zoned, utc, execution_time=dt(2024, 1, 10, 7, 0))
    assert before.missing_intervals == {"s.zoned": _days(7, 8), "s.utc": _days(7, 9)}
    after = world.plan(zoned, utc, execution_time=dt(2024, 1, 10, 8, 0))
    assert after.missing_intervals["s.zoned"] == _days(7, 9)


def test_an_hourly_cron_in_a_half_hour_zone_computes_utc_hours_up_to_its_tick(world, model):
    # Kolkata is UTC+05:30: its hours tick at half past the UTC hour, so at 09:10 the 08:00 hour is not due.
    hourly = model("s.hourly", *QUERY, cron="@hourly", cron_tz="Asia/Kolkata", start="2024-01-10")
    plan = world.plan(hourly, execution_time=dt(2024, 1, 10, 9, 10))
    assert [i.end for i in plan.missing_intervals["s.hourly"]][-2:] == [dt(2024, 1, 10, 7), dt(2024, 1, 10, 8)]


def test_a_partial_interval_ends_at_the_zones_tick(world, model):
    # Midnight in Tokyo is 15:00 UTC the day before: the 10th (UTC) is computed up to it.
    partial = model("s.partial", *QUERY, cron="@daily", cron_tz="Asia/Tokyo", allow_partials=True, start="2024-01-09")
    plan = world.plan(partial, execution_time=dt(2024, 1, 11, 7, 20))
    assert plan.missing_intervals["s.partial"] == (
        Interval(start=dt(2024, 1, 9), end=dt(2024, 1, 10)),
        Interval(start=dt(2024, 1, 10), end=dt(2024, 1, 10, 15)),
    )


def test_cron_tz_is_metadata_as_in_sqlmesh(model):
    plain = model("s.m", *QUERY, cron="@daily")
    zoned = model("s.m", *QUERY, cron="@daily", cron_tz="Europe/Berlin")
    assert data_hash(plain) == data_hash(zoned)  # no new table: only when intervals are due changes
    assert metadata_hash(plain) != metadata_hash(zoned)


@pytest.mark.parametrize(
    ("cron", "zone", "moment", "sqlmesh_tick"),
    [  # SQLMesh 0.236.4's Node.cron_floor at these moments (next tick less one period, on the zone's wall clock)
        ("30 1 * * *", "America/New_York", dt(2024, 11, 3, 6, 0), dt(2024, 11, 2, 5, 30)),  # 01:30 twice that night
        ("30 1 * * *", "America/New_York", dt(2024, 11, 3, 7, 0), dt(2024, 11, 3, 5, 30)),
        ("@daily", "Europe/Berlin", dt(2024, 3, 31, 12, 0), dt(2024, 3, 30, 23, 0)),  # the day clocks go forward
        ("@hourly", "Asia/Kolkata", dt(2024, 1, 10, 9, 10), dt(2024, 1, 10, 8, 30)),
    ],
)
def test_the_last_tick_around_daylight_saving_changes_is_sqlmeshs(cron, zone, moment, sqlmesh_tick):
    assert last_tick_in_zone(cron, moment, zone) == sqlmesh_tick
