"""Segments of period tables (``engine.period_segments``): the plan of an interval write, retirement, the view."""

from datetime import datetime, timedelta

import pytest

from dagster_sparkmesh.engine import period_segments
from dagster_sparkmesh.engine.period_segments import (
    Segment, current_values, droppable_segments, parse_segment, periods_touched, plan_segment_write,
    segment_of_rows, view_sql,
)

V1, V2, V3 = "1700000000000aaaaaaaaa", "1700000060000bbbbbbbbb", "1700000120000ccccccccc"


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day)


def _segment(start: str, end: str, version: str = V1) -> Segment:
    return Segment(_at(start), _at(end), version)


def _ranges(segments) -> list[str]:
    return [f"{s.start.date()}..{s.end.date()}" for s in segments]


def test_a_backfill_into_an_empty_table_writes_one_segment_per_month():
    plan = plan_segment_write([], _at("2024-01-15"), _at("2024-03-10"), "month", V2)
    assert plan.replaced == ()
    assert _ranges(plan.written) == ["2024-01-15..2024-02-01", "2024-02-01..2024-03-01", "2024-03-01..2024-03-10"]
    assert plan.current_after == plan.written


def test_a_day_next_to_a_segment_leaves_it_alone():
    backfill = _segment("2024-01-01", "2024-01-20")
    plan = plan_segment_write([backfill], _at("2024-01-20"), _at("2024-01-21"), "month", V2)
    assert plan.replaced == () and _ranges(plan.written) == ["2024-01-20..2024-01-21"]
    assert _ranges(plan.current_after) == ["2024-01-01..2024-01-20", "2024-01-20..2024-01-21"]


def test_a_day_inside_segments_rewrites_the_ones_it_overlaps_into_their_union():
    first, second = _segment("2024-01-01", "2024-01-10"), _segment("2024-01-10", "2024-01-12")
    third = _segment("2024-01-12", "2024-01-20")
    plan = plan_segment_write([first, second, third], _at("2024-01-09"), _at("2024-01-11"), "month", V2)
    assert plan.replaced == (first, second)
    assert _ranges(plan.written) == ["2024-01-01..2024-01-12"] and plan.written[0].version == V2
    assert _ranges(plan.current_after) == ["2024-01-01..2024-01-12", "2024-01-12..2024-01-20"]


def test_a_period_about_to_hold_too_many_segments_is_merged_whole():
    days = [_segment(f"2024-01-{d:02d}", f"2024-01-{d + 1:02d}") for d in range(1, 4)]
    february = _segment("2024-02-01", "2024-02-02")
    plan = plan_segment_write([*days, february], _at("2024-01-05"), _at("2024-01-06"), "month", V2, max_per_period=3)
    assert plan.replaced == tuple(days)  # february is another period: untouched
    assert _ranges(plan.current_after) == ["2024-01-01..2024-01-06", "2024-02-01..2024-02-02"]


@pytest.mark.parametrize(
    ("start", "end", "period", "expected"),
    [
        ("2024-01-01", "2024-01-02", "month", ["2024-01-01"]),
        ("2024-01-15", "2024-03-01", "month", ["2024-01-01", "2024-02-01"]),
        ("2023-12-31", "2024-01-01 00:00:01", "month", ["2023-12-01", "2024-01-01"]),
        ("2024-01-01 06:00", "2024-01-02 06:00", "day", ["2024-01-01", "2024-01-02"]),
        ("2024-01-01 05:00", "2024-01-01 06:00", "day", ["2024-01-01"]),
    ],
)
def test_periods_touched_by_a_window(start, end, period, expected):
    assert [p.isoformat() for p in periods_touched(_at(start), _at(end), period)] == expected


def test_an_hourly_segment_keeps_its_hours():
    plan = plan_segment_write([], _at("2024-01-01 05:00"), _at("2024-01-01 07:00"), "day", V1)
    segment = plan.written[0]
    assert segment.value == f"20240101T050000_20240101T070000_{V1}"
    assert parse_segment(segment.value, "day") == segment


def test_a_value_of_the_first_layout_is_its_whole_period():
    assert parse_segment("2024-02-01", "month") == Segment(_at("2024-02-01"), _at("2024-03-01"), "")
    assert parse_segment("2024-02-01", "day") == Segment(_at("2024-02-01"), _at("2024-02-02"), "")


def test_a_retired_segment_waits_for_the_grace_from_the_write_that_retired_it():
    old = _segment("2024-01-01", "2024-01-10", V1)
    new = _segment("2024-01-01", "2024-01-10", V2)
    retired_at = new.written_at_ms
    grace = timedelta(minutes=15)
    assert droppable_segments([old, new], [new], retired_at + 60_000, grace) == []
    assert droppable_segments([old, new], [new], retired_at + 15 * 60_000, grace) == [old]


def test_a_segment_no_view_ever_named_is_droppable_at_once():
    current = _segment("2024-01-01", "2024-01-10", V1)
    crashed = _segment("2024-01-01", "2024-01-12", V2)  # newer than every current segment it overlaps
    elsewhere = _segment("2024-03-01", "2024-03-02", V3)  # overlaps no current segment
    assert droppable_segments([current, crashed, elsewhere], [current], current.written_at_ms) == [crashed, elsewhere]


def test_the_view_names_the_current_segments_and_they_read_back():
    segments = [_segment("2024-01-01", "2024-01-10", V1), _segment("2024-01-10", "2024-01-11", V2)]
    sql = view_sql("s.t__data", "`id`, `ds`", "sparkmesh_month", segments)
    assert sql == (
        "SELECT `id`, `ds` FROM `s`.`t__data` WHERE `sparkmesh_month` IN "
        f"('20240101T000000_20240110T000000_{V1}', '20240110T000000_20240111T000000_{V2}')"
    )
    assert [parse_segment(v, "month") for v in current_values(sql)] == segments
    assert current_values(view_sql("s.t__data", "`id`", "sparkmesh_month", [])) == []
    assert current_values("SELECT `id` FROM `s`.`t__data`") is None


def _days(first: str, count: int, version: str = V1) -> list[Segment]:
    start = _at(first)
    return [Segment(start + timedelta(days=n), start + timedelta(days=n + 1), version) for n in range(count)]


def test_a_day_table_about_to_name_too_many_segments_seals_its_older_months_but_the_newest():
    current = _days("2024-01-01", 70)  # January 1 to March 10
    plan = plan_segment_write(current, _at("2024-03-11"), _at("2024-03-12"), "day", V2, seal_above=30)
    # January's segments alone leave 40 named: February is sealed too; March keeps its days.
    assert _ranges(plan.current_after[:2]) == ["2024-01-01..2024-02-01", "2024-02-01..2024-03-01"]
    assert len(plan.current_after) == 2 + 11
    assert plan.replaced == tuple(current[:60])  # their rows are read back into the sealed months
    assert _ranges(plan.written) == ["2024-01-01..2024-02-01", "2024-02-01..2024-03-01", "2024-03-11..2024-03-12"]
    assert {s.version for s in plan.written} == {V2}


def test_the_longest_view_of_a_sealed_table_fits_the_metastore():
    # Derby keeps a view's text in 32,700 characters. The most a sealed table names: SEAL_ABOVE segments, and a newest
    # month of 31 days of eight hour-long segments each.
    hours = [
        Segment(_at("2024-12-01") + timedelta(days=d, hours=h), _at("2024-12-01") + timedelta(days=d, hours=h + 1), V3)
        for d in range(31) for h in range(8)
    ]
    plan = plan_segment_write([*_days("2023-01-01", 600), *hours], _at("2025-01-01"), _at("2025-01-01 01:00"), "day", V3)
    assert len(plan.current_after) <= period_segments.SEAL_ABOVE + 31 * 8 + 1
    columns = ", ".join(f"`column_with_a_long_name_{n}`" for n in range(100))
    assert len(view_sql("analytics.events__1234567890__data", columns, "sparkmesh_day", plan.current_after)) < 30_000


def test_a_day_table_under_the_limit_is_not_sealed():
    current = _days("2024-01-01", 30)
    plan = plan_segment_write(current, _at("2024-01-31"), _at("2024-02-01"), "day", V2, seal_above=31)
    assert plan.replaced == () and len(plan.current_after) == 31


def test_a_first_write_of_many_days_seals_its_own_older_months():
    plan = plan_segment_write([], _at("2024-01-01"), _at("2024-03-03"), "day", V1, seal_above=10)
    assert plan.replaced == ()
    assert _ranges(plan.written) == [
        "2024-01-01..2024-02-01", "2024-02-01..2024-03-01", "2024-03-01..2024-03-02", "2024-03-02..2024-03-03"
    ]
    assert plan.current_after == plan.written


def test_days_written_into_a_sealed_month_rewrite_the_month_once():
    january = _segment("2024-01-01", "2024-02-01")
    february = _days("2024-02-01", 2)
    plan = plan_segment_write([january, *february], _at("2024-01-05 06:00"), _at("2024-01-07"), "day", V2)
    assert plan.replaced == (january,)
    assert _ranges(plan.written) == ["2024-01-01..2024-02-01"]
    assert _ranges(plan.current_after) == ["2024-01-01..2024-02-01", "2024-02-01..2024-02-02", "2024-02-02..2024-02-03"]


def test_rows_of_a_sealed_month_map_to_its_segment_by_their_day():
    sealed, day = _segment("2024-01-01", "2024-02-01"), _segment("2024-02-01", "2024-02-02")
    key = "CAST(CAST(`ts` AS DATE) AS STRING)"
    assert segment_of_rows("ts", "day", [sealed, day]) == (
        f"CASE WHEN {key} >= '2024-01-01' AND {key} < '2024-02-01' THEN '{sealed.value}' "
        f"WHEN {key} = '2024-02-01' THEN '{day.value}' "
        "ELSE RAISE_ERROR('sparkmesh: a row outside the periods of its interval') END"
    )
