"""The one clock and the one time convention: datetimes inside the package are naive UTC.

Only this module reads the wall clock. Everything that needs "now" takes a clock (``ExecutionContext.clock``,
the state store's, the sensor's planner) that defaults to ``utc_now``, so a test can fix or advance time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The wall clock, as naive UTC."""
    return datetime.now(UTC).replace(tzinfo=None)


def to_naive_utc(moment: datetime) -> datetime:
    """Aware datetimes are converted to UTC; naive ones are taken to be UTC already."""
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(UTC).replace(tzinfo=None)
