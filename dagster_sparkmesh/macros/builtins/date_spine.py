"""``@DATE_SPINE('day'|'week'|'month'|'quarter'|'year', start, end)``: one row per date, column ``date_<part>``."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin, option

_PARTS = {"day": "1 DAY", "week": "1 WEEK", "month": "1 MONTH", "quarter": "3 MONTH", "year": "1 YEAR"}


@builtin
def date_spine(evaluator: Any, datepart: Any, start: Any, end: Any) -> exp.Expression:
    part = str(option(datepart, "")).lower()
    if part not in _PARTS:
        raise evaluator.error(f"@DATE_SPINE date part {part!r} is not known", datepart, f"use one of {sorted(_PARTS)}")
    first, last = (f"CAST({value.sql(dialect='spark')} AS DATE)" for value in (start, end))
    column = f"date_{part}"
    # SQLMesh's shape (the generator in FROM, its column named by the alias), so renders compare equal.
    text = (f"SELECT _exploded.{column} AS {column} "
            f"FROM EXPLODE(CAST(SEQUENCE({first}, {last}, INTERVAL {_PARTS[part]}) AS ARRAY<DATE>)) AS _exploded({column})")
    return sqlglot.parse_one(text, dialect="spark")
