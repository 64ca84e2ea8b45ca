"""How the state store writes and reads datetimes: naive UTC, fixed-width ISO text.

Fixed-width text sorts and compares the same way on SQLite and PostgreSQL (no driver-specific timezone
handling), so interval overlap filters can be done in SQL.
"""

from __future__ import annotations

from datetime import UTC, datetime


def to_utc_naive(value: datetime) -> datetime:
    """Aware datetimes are converted to UTC; naive ones are taken to be UTC already."""
    if value.tzinfo is None:
        return value
    return value.astimezone(UTC).replace(tzinfo=None)


def to_text(value: datetime) -> str:
    return to_utc_naive(value).isoformat(timespec="microseconds")


def from_text(text: str) -> datetime:
    return datetime.fromisoformat(text)


def optional_to_text(value: datetime | None) -> str | None:
    return None if value is None else to_text(value)


def optional_from_text(text: str | None) -> datetime | None:
    return None if text is None else from_text(text)


def utc_now() -> datetime:
    """The default clock of the store (naive UTC)."""
    return datetime.now(UTC).replace(tzinfo=None)
