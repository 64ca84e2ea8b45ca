"""``@HAVERSINE_DISTANCE(lat1, lon1, lat2, lon2[, 'mi'|'km'])``: great-circle distance (Earth diameter 7922 mi)."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin, option

_PER_MILE = {"mi": 1.0, "km": 1.60934}


@builtin
def haversine_distance(evaluator: Any, lat1: Any, lon1: Any, lat2: Any, lon2: Any, unit: Any = None) -> exp.Expression:
    name = str(option(unit, "mi")).lower()
    if name not in _PER_MILE:
        raise evaluator.error(f"@HAVERSINE_DISTANCE unit {name!r} is not known", lat1, "use 'mi' or 'km'")
    a, b, c, d = (arg.sql(dialect="spark") for arg in (lat1, lon1, lat2, lon2))
    text = (
        f"7922 * ASIN(SQRT((POWER(SIN(RADIANS(({c} - {a}) / 2)), 2)) + (COS(RADIANS({a})) * COS(RADIANS({c}))"
        f" * POWER(SIN(RADIANS(({d} - {b}) / 2)), 2)))) * {_PER_MILE[name]}"
    )
    return sqlglot.parse_one(text, dialect="spark")
