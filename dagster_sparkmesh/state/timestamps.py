"""How the state store writes and reads datetimes: naive UTC, fixed-width ISO text.

Fixed-width text sorts and compares the same way on SQLite and PostgreSQL (no driver-specific timezone
handling), so interval overlap filters can be done in SQL.
"""

from __future__ import annotations

from datetime import datetime

from dagster_sparkmesh.clock import to_naive_utc


def to_text(value: datetime) -> str:
    return to_naive_utc(value).isoformat(timespec="microseconds")


def from_text(text: str) -> datetime:
    return datetime.fromisoformat(text)


def optional_to_text(value: datetime | None) -> str | None:
    return None if value is None else to_text(value)


def optional_from_text(text: str | None) -> datetime | None:
    return None if text is None else from_text(text)

