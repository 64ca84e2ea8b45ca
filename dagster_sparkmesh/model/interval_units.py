"""SQLMesh's interval units, a model's ``interval_unit`` (``plan.intervals`` infers one from the cron otherwise)."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache

from croniter import croniter

INTERVAL_UNIT_CRONS = {
    "year": "@yearly", "month": "@monthly", "day": "@daily", "hour": "@hourly",
    "half_hour": "*/30 * * * *", "quarter_hour": "*/15 * * * *", "five_minute": "*/5 * * * *",
}
"""Each unit's name, longest first, and the cron whose ticks bound its intervals."""
SHORTEST_INTERVAL = timedelta(minutes=5)
_SAMPLED_TICKS = 400  # enough for a yearly pattern of any 5-field cron finer than monthly


@lru_cache(maxsize=1024)
def tick_gaps(cron: str) -> tuple[timedelta, timedelta]:
    """The shortest and the longest gap between two ticks of a valid ``cron`` (a sample of its ticks)."""
    ticks = croniter(" ".join(cron.split()).lower(), datetime(2024, 1, 1))
    previous, gaps = ticks.get_next(datetime), []
    for _ in range(_SAMPLED_TICKS):
        following = ticks.get_next(datetime)
        gaps.append(following - previous)
        previous = following
    return min(gaps), max(gaps)


def too_frequent(cron: str) -> bool:
    """Whether a valid cron ticks more often than SQLMesh's shortest interval unit (5 minutes) allows."""
    return tick_gaps(cron)[0] < SHORTEST_INTERVAL
