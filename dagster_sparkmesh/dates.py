"""Dates the user types (``--start``, ``--end``, TTLs) turned into naive UTC datetimes.

Relative values are taken against an explicit ``now`` so that a plan is a pure function of its inputs.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from dagster_sparkmesh.clock import to_naive_utc
from dagster_sparkmesh.errors import PlanError

DateLike = str | date | datetime
"""A date as the user or the API gives it."""

_UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}
_RELATIVE = re.compile(r"^(\d+)\s+(minute|hour|day|week)s?\s+ago$")
_TTL = re.compile(r"^(?:in\s+)?(\d+)\s+(minute|hour|day|week)s?$")
_HINT = "use YYYY-MM-DD, 'YYYY-MM-DD HH:MM[:SS]', an ISO timestamp, 'now', 'today', 'yesterday' or 'N days ago'"


def parse_datetime(value: DateLike, *, now: datetime) -> datetime:
    """A user date or time as naive UTC; raise PlanError with a hint on anything else."""
    if isinstance(value, datetime):
        return to_naive_utc(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    text = " ".join(value.strip().lower().split())
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    named = {"now": now, "today": today, "yesterday": today - timedelta(days=1)}
    if text in named:
        return named[text]
    relative = _RELATIVE.match(text)
    if relative:
        return now - timedelta(seconds=int(relative.group(1)) * _UNIT_SECONDS[relative.group(2)])
    try:
        return to_naive_utc(datetime.fromisoformat(value.strip()))
    except ValueError:
        raise PlanError(f"cannot read {value!r} as a date or time", snippet=value, hint=_HINT) from None


def parse_ttl(value: str) -> timedelta:
    """``in 1 week``, ``3 days``: how long a development environment lives."""
    match = _TTL.match(" ".join(value.strip().lower().split()))
    if not match:
        raise PlanError(f"cannot read {value!r} as a duration", snippet=value, hint="use e.g. 'in 1 week' or '3 days'")
    return timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])
