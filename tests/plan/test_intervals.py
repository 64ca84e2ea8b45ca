from datetime import datetime as dt

import pytest

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.plan.intervals import (
    IntervalUnit,
    Schedule,
    batches,
    expected_intervals,
    interval_unit,
    with_lookback,
)
from dagster_sparkmesh.snapshot.records import Interval


def iv(start: dt, end: dt) -> Interval:
    return Interval(start=start, end=end)


def days(*numbers: int) -> list[Interval]:
    return [iv(dt(2024, 1, n), dt(2024, 1, n + 1)) for n in numbers]


@pytest.mark.parametrize(
    "cron, unit",
    [
        ("@hourly", IntervalUnit.HOUR),
        ("@daily", IntervalUnit.DAY),
        ("0 0 * * *", IntervalUnit.DAY),
        ("@weekly", IntervalUnit.WEEK),
        ("@monthly", IntervalUnit.MONTH),
        ("@yearly", IntervalUnit.YEAR),
        ("*/15 * * * *", IntervalUnit.CRON),
    ],
)
def test_interval_unit(cron, unit):
    assert interval_unit(cron) is unit


@pytest.mark.parametrize("cron", ["@sometimes", "61 * * * *", "* * *"])
def test_invalid_cron_is_a_plan_error(cron):
    with pytest.raises(PlanError, match="invalid cron") as error:
        interval_unit(cron)
    assert error.value.hint and cron in str(error.value)


def test_daily_intervals_exclude_the_incomplete_last_one():
    assert expected_intervals("@daily", dt(2024, 1, 1), dt(2024, 1, 4, 6, 30)) == days(1, 2, 3)


def test_start_is_floored_to_include_its_interval():
    assert expected_intervals("@daily", dt(2024, 1, 1, 12), dt(2024, 1, 3)) == days(1, 2)


def test_hourly_intervals():
    result = expected_intervals("@hourly", dt(2024, 1, 1, 22), dt(2024, 1, 2, 1, 59))
    assert result == [iv(dt(2024, 1, 1, 22), dt(2024, 1, 1, 23)), iv(dt(2024, 1, 1, 23), dt(2024, 1, 2)),
                      iv(dt(2024, 1, 2), dt(2024, 1, 2, 1))]


def test_monthly_intervals_cross_the_year():
    result = expected_intervals("@monthly", dt(2023, 11, 15), dt(2024, 2, 1))
    assert result == [iv(dt(2023, 11, 1), dt(2023, 12, 1)), iv(dt(2023, 12, 1), dt(2024, 1, 1)),
                      iv(dt(2024, 1, 1), dt(2024, 2, 1))]


def test_weekly_intervals_start_on_sunday():
    result = expected_intervals("@weekly", dt(2024, 1, 3), dt(2024, 1, 21))  # Wednesday → Sunday
    assert result == [iv(dt(2023, 12, 31), dt(2024, 1, 7)), iv(dt(2024, 1, 7), dt(2024, 1, 14)),
                      iv(dt(2024, 1, 14), dt(2024, 1, 21))]


def test_yearly_intervals():
    assert expected_intervals("@yearly", dt(2022, 6, 1), dt(2024, 3, 1)) == [
        iv(dt(2022, 1, 1), dt(2023, 1, 1)), iv(dt(2023, 1, 1), dt(2024, 1, 1))
    ]


def test_arbitrary_cron_via_croniter():
    result = expected_intervals("0 */6 * * *", dt(2024, 1, 1, 7), dt(2024, 1, 2, 5))
    assert result == [iv(dt(2024, 1, 1, 6), dt(2024, 1, 1, 12)), iv(dt(2024, 1, 1, 12), dt(2024, 1, 1, 18)),
                      iv(dt(2024, 1, 1, 18), dt(2024, 1, 2))]


def test_cron_previous_tick():
    assert Schedule.of("@monthly").previous(dt(2024, 1, 1)) == dt(2023, 12, 1)
    assert Schedule.of("*/15 * * * *").previous(dt(2024, 1, 1, 0, 30)) == dt(2024, 1, 1, 0, 15)


def test_batches_respect_size_and_gaps():
    assert batches(days(1, 2, 3, 4, 5, 8, 9), 2) == [
        iv(dt(2024, 1, 1), dt(2024, 1, 3)), iv(dt(2024, 1, 3), dt(2024, 1, 5)), *days(5),
        iv(dt(2024, 1, 8), dt(2024, 1, 10)),
    ]
    assert batches(days(1, 2, 3, 8), None) == [iv(dt(2024, 1, 1), dt(2024, 1, 4)), *days(8)]
    assert batches([], 3) == []


def test_lookback_adds_previous_intervals_but_not_before_start():
    assert with_lookback(days(5), "@daily", 2, dt(2024, 1, 1)) == days(3, 4, 5)
    assert with_lookback(days(2, 3), "@daily", 3, dt(2024, 1, 1)) == days(1, 2, 3)
