from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from dagster_sparkmesh.errors import StateError
from dagster_sparkmesh.snapshot.records import Interval


def day(number: int) -> datetime:
    return datetime(2024, 1, 1) + timedelta(days=number - 1)


def iv(start: int, end: int) -> Interval:
    return Interval(start=day(start), end=day(end))


def test_intervals_round_trip_merged(state_store):
    state_store.add_interval("db.a", "v1", iv(3, 4))
    state_store.add_intervals("db.a", "v1", [iv(1, 2), iv(2, 3), iv(7, 8)])
    state_store.add_interval("db.a", "v2", iv(1, 9))
    state_store.add_interval("db.b", "v1", iv(1, 9))
    assert state_store.get_intervals("db.a", "v1") == [iv(1, 4), iv(7, 8)]
    assert state_store.get_intervals("db.a", "v2") == [iv(1, 9)]
    assert state_store.get_intervals("db.a", "v3") == []


def test_intervals_keep_time_of_day_and_accept_aware_datetimes(state_store):
    aware = Interval(
        start=datetime(2024, 1, 1, 3, tzinfo=timezone(timedelta(hours=2))),
        end=datetime(2024, 1, 1, 5, 30, tzinfo=timezone.utc),
    )
    state_store.add_interval("db.a", "v1", aware)
    assert state_store.get_intervals("db.a", "v1") == [
        Interval(start=datetime(2024, 1, 1, 1), end=datetime(2024, 1, 1, 5, 30))
    ]


def test_remove_intervals_splits_stored_rows(state_store):
    state_store.add_intervals("db.a", "v1", [iv(1, 5), iv(5, 10), iv(12, 15)])
    state_store.remove_intervals("db.a", "v1", iv(4, 13))
    assert state_store.get_intervals("db.a", "v1") == [iv(1, 4), iv(13, 15)]
    state_store.remove_intervals("db.a", "v1", iv(2, 3))
    assert state_store.get_intervals("db.a", "v1") == [iv(1, 2), iv(3, 4), iv(13, 15)]
    assert state_store.get_intervals("db.a", "v1") == state_store.get_intervals("db.a", "v1")


def test_remove_intervals_leaves_other_versions_alone(state_store):
    state_store.add_interval("db.a", "v1", iv(1, 5))
    state_store.add_interval("db.a", "v2", iv(1, 5))
    state_store.remove_intervals("db.a", "v1", iv(1, 5))
    assert state_store.get_intervals("db.a", "v1") == []
    assert state_store.get_intervals("db.a", "v2") == [iv(1, 5)]


def test_compact_and_delete_intervals(state_store):
    state_store.add_intervals("db.a", "v1", [iv(n, n + 1) for n in range(1, 30)])
    state_store.compact_intervals("db.a", "v1")
    assert state_store.get_intervals("db.a", "v1") == [iv(1, 30)]
    with state_store.engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM intervals").scalar() == 1
    state_store.delete_intervals("db.a", "v1")
    assert state_store.get_intervals("db.a", "v1") == []


def test_missing_intervals(state_store):
    state_store.add_intervals("db.a", "v1", [iv(1, 3), iv(4, 5)])
    expected = [iv(n, n + 1) for n in range(1, 6)]
    assert state_store.missing_intervals("db.a", "v1", expected) == [iv(3, 4), iv(5, 6)]
    assert state_store.missing_intervals("db.other", "v1", expected) == expected


def test_an_empty_interval_is_refused_and_nothing_of_the_batch_is_recorded(state_store):
    with pytest.raises(StateError, match="empty interval"):
        state_store.add_intervals("db.a", "v1", [iv(1, 2), iv(3, 3)])
    assert state_store.get_intervals("db.a", "v1") == []
