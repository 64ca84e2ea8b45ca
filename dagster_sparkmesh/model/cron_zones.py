"""SQLMesh's ``cron_tz``: the time zone a model's cron ticks in. Only the ticks move (when an interval is due);
the intervals themselves stay in UTC, as in SQLMesh (``Node.cron_floor`` in the zone, then the interval unit's
floor in UTC)."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from croniter import croniter


def read_cron_tz(text: str, error: Callable[[str, str], Exception]) -> str | None:
    """An IANA zone name as written; None for UTC (or nothing), as SQLMesh keeps it. ``error(message, hint)`` for
    a name that is not a zone."""
    name = text.strip()
    if not name or name == "UTC":
        return None
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise error(f"unknown cron_tz {text!r}", "use an IANA time zone name, e.g. 'America/Los_Angeles' or 'UTC'") from None
    return name


def model_zone(written: str | None, default: str | None) -> str | None:
    """The model's zone: as written (``UTC`` too, over a default zone), else the project's default; None for UTC."""
    zone = written or default
    return None if zone == "UTC" else zone


def last_tick_in_zone(cron: str, moment: datetime, zone: str) -> datetime:
    """The cron's last tick at or before ``moment`` (naive UTC), the cron read in ``zone``; naive UTC.

    Computed as SQLMesh computes it (``Node.cron_floor``): the next tick after ``moment``, less one period on the
    zone's wall clock for a cron of fixed period; so around a change of daylight saving time the same tick as
    SQLMesh's, not an hour apart."""
    tz = zoneinfo.ZoneInfo(zone)
    expression = cron.strip().lower()
    local = moment.replace(tzinfo=timezone.utc).astimezone(tz)
    following = datetime.fromtimestamp(croniter(expression, local).get_next(float), tz)
    period = _fixed_period(expression)
    tick = following - period if period else datetime.fromtimestamp(croniter(expression, following).get_prev(float), tz)
    return tick.astimezone(timezone.utc).replace(tzinfo=None)


@lru_cache(maxsize=256)
def _fixed_period(expression: str) -> timedelta | None:
    """The time between two ticks when it never varies (SQLMesh's ``interval_seconds``), else None."""
    ticks = croniter(expression, datetime(2024, 1, 1))
    moments = [ticks.get_next(datetime) for _ in range(6)]
    gaps = {later - earlier for earlier, later in zip(moments, moments[1:])}
    return gaps.pop() if len(gaps) == 1 else None
