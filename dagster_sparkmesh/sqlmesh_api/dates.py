"""``sqlmesh.utils.date``: the date helpers project files call, with SQLMesh's conventions.

Datetimes are UTC and timezone-aware (as SQLMesh returns them); timestamps are epoch milliseconds; ``to_ds`` is
``YYYY-MM-DD``. Text may be ISO, epoch milliseconds, or a relative phrase (``"1 week ago"``, ``"yesterday"``).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone
from typing import Union

from dagster_sparkmesh.clock import utc_now

TimeLike = Union[date, datetime, str, int, float]

_RELATIVE = re.compile(r"^\s*(\d+)\s+(second|minute|hour|day|week|month|year)s?\s+ago\s*$", re.IGNORECASE)
_UNIT_DAYS = {"week": 7, "month": 30, "year": 365}
_NAMED_DAYS = {"today": 0, "yesterday": -1, "tomorrow": 1}


def now(minute_floor: bool = True) -> datetime:
    moment = utc_now().replace(tzinfo=timezone.utc)
    return moment.replace(second=0, microsecond=0) if minute_floor else moment


def now_timestamp(minute_floor: bool = False) -> int:
    return to_timestamp(now(minute_floor))


def now_ds() -> str:
    return to_ds(now())


def to_datetime(value: TimeLike, relative_base: datetime | None = None) -> datetime:
    """Any supported time value as an aware UTC datetime; a ``ValueError`` names what could not be read."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=timezone.utc)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, tz=timezone.utc)
    if isinstance(value, str):
        return _parse_text(value, relative_base or now())
    raise ValueError(f"cannot read {value!r} as a date or time")


def _parse_text(text: str, base: datetime) -> datetime:
    stripped = text.strip()
    if stripped.isdigit():
        return to_datetime(int(stripped))
    lowered = stripped.lower()
    if lowered == "now":
        return base
    if lowered in _NAMED_DAYS:
        midnight = base.replace(hour=0, minute=0, second=0, microsecond=0)
        return midnight + timedelta(days=_NAMED_DAYS[lowered])
    match = _RELATIVE.match(stripped)
    if match:
        return base - _delta(int(match.group(1)), match.group(2).lower())
    try:
        return to_datetime(datetime.fromisoformat(stripped))
    except ValueError:
        raise ValueError(
            f"cannot read {text!r} as a date or time: use an ISO date, epoch milliseconds or 'N days ago'"
        ) from None


def _delta(count: int, unit: str) -> timedelta:
    if unit in _UNIT_DAYS:  # calendar months and years approximated, enough for a model's start
        return timedelta(days=count * _UNIT_DAYS[unit])
    return timedelta(**{f"{unit}s": count})


def to_date(value: TimeLike, relative_base: datetime | None = None) -> date:
    return to_datetime(value, relative_base).date()


def to_ds(value: TimeLike) -> str:
    return to_date(value).isoformat()


def to_ts(value: TimeLike) -> str:
    return to_datetime(value).strftime("%Y-%m-%d %H:%M:%S")


def to_tstz(value: TimeLike) -> str:
    return to_datetime(value).isoformat(sep=" ")


def to_timestamp(value: TimeLike, relative_base: datetime | None = None) -> int:
    return int(to_datetime(value, relative_base).timestamp() * 1000)


def yesterday(relative_base: datetime | None = None) -> datetime:
    return to_datetime("yesterday", relative_base)


def yesterday_ds() -> str:
    return to_ds(yesterday())


def yesterday_timestamp() -> int:
    return to_timestamp(yesterday())


def make_inclusive_end(end: TimeLike) -> datetime:
    """The last microsecond of an exclusive end: SQLMesh's ``@end_ts`` convention."""
    return to_datetime(end) - timedelta(microseconds=1)


def is_date(value: object) -> bool:
    return isinstance(value, date) and not isinstance(value, datetime)


__all__ = [
    "TimeLike", "now", "now_timestamp", "now_ds", "to_datetime", "to_date", "to_ds", "to_ts", "to_tstz",
    "to_timestamp", "yesterday", "yesterday_ds", "yesterday_timestamp", "make_inclusive_end", "is_date",
]  # fmt: skip
