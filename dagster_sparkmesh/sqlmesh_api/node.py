"""``sqlmesh.core.node``: SQLMesh's ``IntervalUnit``, which Python models pass as ``interval_unit`` and custom
materializations find on ``model.interval_unit`` (a ``str`` enum: it equals its name, ``IntervalUnit.DAY == "day"``)."""

from __future__ import annotations

from enum import Enum


class IntervalUnit(str, Enum):
    YEAR = "year"
    MONTH = "month"
    DAY = "day"
    HOUR = "hour"
    HALF_HOUR = "half_hour"
    QUARTER_HOUR = "quarter_hour"
    FIVE_MINUTE = "five_minute"


__all__ = ["IntervalUnit"]
