from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from dagster_sparkmesh.sqlmesh_api import dates

BASE = datetime(2024, 3, 10, 15, 30, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-02", datetime(2024, 1, 2, tzinfo=timezone.utc)),
        ("2024-01-02 05:06:07", datetime(2024, 1, 2, 5, 6, 7, tzinfo=timezone.utc)),
        ("1704153600000", datetime(2024, 1, 2, tzinfo=timezone.utc)),
        ("1 week ago", datetime(2024, 3, 3, 15, 30, tzinfo=timezone.utc)),
        ("2 days ago", datetime(2024, 3, 8, 15, 30, tzinfo=timezone.utc)),
        ("yesterday", datetime(2024, 3, 9, tzinfo=timezone.utc)),
        ("today", datetime(2024, 3, 10, tzinfo=timezone.utc)),
    ],
)
def test_to_datetime_reads_sqlmesh_time_values(text: str, expected: datetime) -> None:
    assert dates.to_datetime(text, relative_base=BASE) == expected


def test_conversions() -> None:
    assert dates.to_ds(date(2024, 1, 2)) == "2024-01-02"
    assert dates.to_ts(datetime(2024, 1, 2, 3, 4, 5)) == "2024-01-02 03:04:05"
    assert dates.to_timestamp("2024-01-02") == 1704153600000
    assert dates.to_date(1704153600000) == date(2024, 1, 2)
    assert dates.make_inclusive_end("2024-01-02") == datetime(2024, 1, 1, 23, 59, 59, 999999, tzinfo=timezone.utc)


def test_unreadable_text_says_what_to_write() -> None:
    with pytest.raises(ValueError, match="N days ago"):
        dates.to_datetime("next blue moon")
