from __future__ import annotations

from datetime import datetime, timedelta, timezone

from dagster_sparkmesh.state.timestamps import from_text, to_text


def test_naive_datetimes_round_trip_as_fixed_width_text():
    value = datetime(2024, 3, 1, 12, 30)
    assert to_text(value) == "2024-03-01T12:30:00.000000"
    assert from_text(to_text(value)) == value


def test_aware_datetimes_are_stored_as_naive_utc():
    value = datetime(2024, 3, 1, 14, 30, tzinfo=timezone(timedelta(hours=2)))
    assert from_text(to_text(value)) == datetime(2024, 3, 1, 12, 30)


def test_text_order_is_time_order():
    values = [datetime(999, 1, 1), datetime(2024, 1, 1, 0, 0, 0, 1), datetime(2024, 1, 1), datetime(10000 - 1, 1, 1)]
    assert sorted(values, key=to_text) == sorted(values)
