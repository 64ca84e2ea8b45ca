"""SQLMesh's ``cron_tz``: the time zone a model's cron ticks in. Only the ticks move (when an interval is due);
the intervals themselves stay in UTC, as in SQLMesh (``Node.cron_floor`` in the zone, then the interval unit's
floor in UTC)."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from datetime import datetime, timezone

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
    """The cron's last tick at or before ``moment`` (naive UTC), the cron read in ``zone``; naive UTC."""
    local = moment.replace(tzinfo=timezone.utc).astimezone(zoneinfo.ZoneInfo(zone)).replace(second=0, microsecond=0)
    expression = cron.strip().lower()
    tick = local if croniter.match(expression, local) else croniter(expression, local).get_prev(datetime)
    return tick.astimezone(timezone.utc).replace(tzinfo=None)
