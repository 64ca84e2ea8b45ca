from datetime import date, datetime, timedelta, timezone

import pytest

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.dates import parse_datetime, parse_ttl

NOW = datetime(2024, 3, 10, 15, 45, 12)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2024-01-01", datetime(2024, 1, 1)),
        ("2024-01-01 12:00", datetime(2024, 1, 1, 12)),
        ("2024-01-01T12:30:05", datetime(2024, 1, 1, 12, 30, 5)),
        ("2024-01-01T12:00:00+02:00", datetime(2024, 1, 1, 10)),
        ("now", NOW),
        ("today", datetime(2024, 3, 10)),
        ("Yesterday", datetime(2024, 3, 9)),
        ("3 days ago", NOW - timedelta(days=3)),
        ("1 day ago", NOW - timedelta(days=1)),
        ("2 hours ago", NOW - timedelta(hours=2)),
    ],
)
def test_parse_datetime(text, expected):
    assert parse_datetime(text, now=NOW) == expected


def test_dates_and_aware_datetimes_become_naive_utc():
    assert parse_datetime(date(2024, 1, 2), now=NOW) == datetime(2024, 1, 2)
    aware = datetime(2024, 1, 2, 1, tzinfo=timezone(timedelta(hours=3)))
    assert parse_datetime(aware, now=NOW) == datetime(2024, 1, 1, 22)


@pytest.mark.parametrize("text", ["2024-13-01", "tomorrow-ish", "three days ago", ""])
def test_bad_input_is_a_plan_error_with_a_hint(text):
    with pytest.raises(PlanError) as error:
        parse_datetime(text, now=NOW)
    assert "yesterday" in error.value.hint


def test_ttl():
    assert parse_ttl("in 1 week") == timedelta(weeks=1)
    assert parse_ttl("3 days") == timedelta(days=3)
    with pytest.raises(PlanError):
        parse_ttl("forever")
