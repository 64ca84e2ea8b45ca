from __future__ import annotations

from datetime import datetime, timedelta, timezone

from dagster_sparkmesh.snapshot.intervals import merge, normalize, remove_range, uncovered
from dagster_sparkmesh.snapshot.records import Interval


def day(number: int) -> datetime:
    return datetime(2024, 1, 1) + timedelta(days=number - 1)


def iv(start: int, end: int) -> Interval:
    return Interval(start=day(start), end=day(end))


def days(*numbers: int) -> list[Interval]:
    return [iv(n, n + 1) for n in numbers]


def test_merge_joins_overlapping_and_touching_and_sorts():
    assert merge([iv(5, 6), iv(1, 2), iv(2, 3), iv(2, 4), iv(8, 9)]) == [iv(1, 4), iv(5, 6), iv(8, 9)]


def test_merge_drops_empty_intervals():
    assert merge([iv(3, 3), iv(1, 2)]) == [iv(1, 2)]


def test_merge_joins_partial_overlaps_into_contiguous_ranges():
    half_day = Interval(start=day(2) + timedelta(hours=12), end=day(5))
    assert merge([*days(3, 1, 2), half_day, *days(7), iv(9, 9)]) == [iv(1, 5), *days(7)]
    assert merge(days(1, 2, 4)) == [iv(1, 3), *days(4)]


def test_remove_range_splits_a_straddling_interval():
    assert remove_range([iv(1, 10)], iv(4, 6)) == [iv(1, 4), iv(6, 10)]
    assert remove_range([iv(1, 6)], iv(2, 4)) == [*days(1), iv(4, 6)]


def test_remove_range_trims_edges_and_keeps_disjoint():
    assert remove_range([iv(1, 5), iv(7, 9), iv(10, 12)], iv(4, 8)) == [iv(1, 4), iv(8, 9), iv(10, 12)]
    assert remove_range([iv(1, 5)], iv(1, 5)) == []
    assert remove_range([iv(1, 5)], iv(5, 6)) == [iv(1, 5)]


def test_uncovered_reports_unit_intervals_not_entirely_covered():
    expected = [iv(n, n + 1) for n in range(1, 7)]
    recorded = [iv(1, 3), Interval(start=day(4), end=day(5) + timedelta(hours=12)), iv(6, 7)]
    assert uncovered(recorded, expected) == [iv(3, 4), iv(5, 6)]


def test_uncovered_keeps_partly_covered_intervals_missing():
    recorded = [iv(1, 3), Interval(start=day(4) + timedelta(hours=12), end=day(6))]
    assert uncovered(recorded, days(1, 2, 3, 4, 5)) == days(3, 4)


def test_normalize_makes_aware_bounds_naive_utc():
    aware = Interval(start=datetime(2024, 1, 1, 3, tzinfo=timezone(timedelta(hours=2))), end=day(2))
    assert normalize(aware) == Interval(start=datetime(2024, 1, 1, 1), end=day(2))
