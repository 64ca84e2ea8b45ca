"""SQLMesh's interval units, a model's ``interval_unit`` (``plan.intervals`` infers one from the cron otherwise)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Annotated

from croniter import croniter
from pydantic import AfterValidator

from dagster_sparkmesh.errors import PlanError

INTERVAL_UNIT_CRONS = {
    "year": "@yearly", "month": "@monthly", "day": "@daily", "hour": "@hourly",
    "half_hour": "*/30 * * * *", "quarter_hour": "*/15 * * * *", "five_minute": "*/5 * * * *",
}
"""Each unit's name, longest first, and the cron whose ticks bound its intervals."""
SHORTEST_INTERVAL = timedelta(minutes=5)
CRON_ALIASES = frozenset({"@daily", "@hourly", "@weekly", "@monthly", "@yearly", "@annually", "@midnight"})
_SAMPLED_TICKS = 400  # enough for a yearly pattern of any 5-field cron finer than monthly


def valid_cron(text: str) -> bool:
    """A cron SQLMesh accepts: one of its aliases (``@daily``...) or five fields croniter reads."""
    return text.lower() in CRON_ALIASES or croniter.is_valid(text)


def _checked_cron(value: str | None) -> str | None:
    if value is not None and not valid_cron(value):
        raise ValueError(f"invalid cron {value!r}: write @daily, @weekly... or five fields like '0 6 * * 1'")
    return value


ScheduleCron = Annotated[str | None, AfterValidator(_checked_cron)]
"""A kind's ``auto_restatement_cron``: when a prod ``run`` restates the model again (``plan.auto_restatements``)."""


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


TOO_FREQUENT_HINT = "SQLMesh's shortest interval is 5 minutes: use a cron such as '*/5 * * * *' or slower"


def too_frequent_message(cron: str) -> str:
    return f"the cron {cron!r} ticks more often than every 5 minutes"


def read_interval_unit(text: str, error: Callable[[str, str], Exception]) -> str:
    """SQLMesh's ``interval_unit`` as written (any case): one of its unit names, else ``error(message, hint)``."""
    unit = text.strip().lower()
    if unit not in INTERVAL_UNIT_CRONS:
        raise error(f"unknown interval_unit {text!r}", f"use one of {', '.join(INTERVAL_UNIT_CRONS)}")
    return unit


def too_frequent(cron: str) -> bool:
    """Whether a valid cron ticks more often than SQLMesh's shortest interval unit (5 minutes) allows. A cron
    that never ticks (``0 0 30 2 *``) raises ValueError (croniter's error)."""
    return tick_gaps(cron)[0] < SHORTEST_INTERVAL


_UNIT_CRONS = (  # SQLMesh's interval units, longest first: (shortest gap between ticks, the unit's own cron)
    (timedelta(days=365), "@yearly"),
    (timedelta(days=28), "@monthly"),
    (timedelta(days=1), "@daily"),
    (timedelta(hours=1), "@hourly"),
    (timedelta(minutes=30), "*/30 * * * *"),
    (timedelta(minutes=15), "*/15 * * * *"),
    (timedelta(minutes=5), "*/5 * * * *"),
)


@lru_cache(maxsize=1024)
def unit_cron(cron: str) -> str:
    """The cron of the intervals a model with this ``cron`` computes: SQLMesh's interval unit, the longest unit
    (year, month, day, hour, 30, 15 or 5 minutes) that fits between two of its ticks. A ``@weekly`` model computes
    daily intervals, seven of them each Sunday; ``0 */6 * * *`` six hourly ones. The cron says only when they are
    due (``plan.windows``)."""
    normalized = " ".join(cron.split()).lower()
    if normalized in _UNIT_CRON_OF_ALIAS:
        return _UNIT_CRON_OF_ALIAS[normalized]
    shortest = tick_gaps(normalized)[0]
    for gap, unit in _UNIT_CRONS:
        if shortest >= gap:
            return unit
    raise PlanError(too_frequent_message(cron), snippet=cron, hint=TOO_FREQUENT_HINT)


_UNIT_CRON_OF_ALIAS = {
    **{alias: "@hourly" for alias in ("@hourly", "0 * * * *")},
    **{alias: "@daily" for alias in ("@daily", "@midnight", "0 0 * * *", "@weekly", "0 0 * * 0")},
    **{alias: "@monthly" for alias in ("@monthly", "0 0 1 * *")},
    **{alias: "@yearly" for alias in ("@yearly", "@annually", "0 0 1 1 *")},
}
TICKS_ON_UNIT = frozenset(alias for alias in _UNIT_CRON_OF_ALIAS if alias not in ("@weekly", "0 0 * * 0"))
"""The aliases whose ticks are their own unit's."""


def unit_longer_than_cron(interval_unit: str | None, cron: str) -> str | None:
    """SQLMesh's rule, without ``allow_partials``: an ``interval_unit`` longer than the one the cron implies would
    find no complete interval at most ticks. Returns the implied unit's name when that is so, else None."""
    if interval_unit is None:
        return None
    implied = unit_cron(cron)
    if tick_gaps(INTERVAL_UNIT_CRONS[interval_unit])[0] <= tick_gaps(implied)[0]:
        return None
    return unit_name(implied)


def unit_name(unit_cron_text: str) -> str:
    """SQLMesh's name (``day``, ``hour``...) of the unit whose cron is ``unit_cron_text`` (a value of
    ``INTERVAL_UNIT_CRONS``)."""
    return next(name for name, unit in INTERVAL_UNIT_CRONS.items() if unit == unit_cron_text)


def unit_longer_than_cron_message(interval_unit: str, cron: str, implied: str) -> tuple[str, str]:
    """The error's message and hint for ``unit_longer_than_cron``."""
    return (
        f"the cron {cron!r} ticks more often than the interval unit {interval_unit!r}",
        f"use an interval unit no longer than the cron's own ({implied}), a cron as slow, or allow_partials true "
        "(each tick computes the interval so far)",
    )
