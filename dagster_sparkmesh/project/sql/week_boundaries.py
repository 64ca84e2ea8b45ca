"""A difference of dates in weeks, which Snowflake's ``DATEDIFF(week, a, b)``, BigQuery's ``DATE_DIFF(b, a, WEEK)``
(``WEEK(<day>)``, ``ISOWEEK``) and T-SQL's ``DATEDIFF(week, a, b)`` count as the week starts crossed, and Spark's
``DATEDIFF(WEEK, a, b)`` as whole seven-day spans elapsed (Sunday to the next Monday: 1 week there, 0 in Spark).

Each side is moved back to the start of its week, and the days between those starts divided by 7 (an exact
division). The week starts where each dialect's documentation says it does for this function:

- Snowflake: Monday (its default ``WEEK_START`` 0 behaves as Monday for DATEDIFF); the session parameter is not
  known when a model loads;
- BigQuery: ``WEEK`` on Sunday, ``WEEK(<day>)`` on that day, ``ISOWEEK`` on Monday;
- T-SQL: Sunday, whatever ``SET DATEFIRST`` says (documented for DATEDIFF).

Not rewritten: DuckDB's ``date_diff('week', ...)``, which counts whole weeks (as Spark does, checked on DuckDB 1.x),
and Redshift's, which sqlglot reads as another expression (whole weeks of days).
"""

from __future__ import annotations

from sqlglot import exp

SPARK_DAY = {"SUNDAY": 1, "MONDAY": 2, "TUESDAY": 3, "WEDNESDAY": 4, "THURSDAY": 5, "FRIDAY": 6, "SATURDAY": 7}
"""Spark's DAYOFWEEK of each day (Sunday = 1)."""
_PLAIN_WEEK_START = {"snowflake": "MONDAY", "bigquery": "SUNDAY", "tsql": "SUNDAY"}


def weeks_crossed(node: exp.DateDiff, dialect: str) -> exp.Expression:
    """``node`` as the week starts crossed from its second argument to its first, or ``node`` when its unit is no
    week or its dialect counts whole weeks."""
    first_day = _week_start(node, dialect)
    if first_day is None:
        return node
    days = exp.Anonymous(this="DATEDIFF", expressions=[start_of_week(side, first_day) for side in (node.this, node.expression)])
    return exp.Paren(this=exp.IntDiv(this=days, expression=exp.Literal.number(7)))


def _week_start(node: exp.DateDiff, dialect: str) -> str | None:
    unit = node.args.get("unit")
    # T-SQL's DATEDIFF counts boundaries without sqlglot marking it so; the others are marked.
    if not (node.args.get("date_part_boundary") or dialect == "tsql"):
        return None
    if isinstance(unit, exp.WeekStart):
        day = unit.name.upper()
        return day if day in SPARK_DAY else None
    name = unit.name.upper() if isinstance(unit, (exp.Var, exp.Literal, exp.Identifier)) else ""
    if name == "ISOWEEK" and dialect == "bigquery":
        return "MONDAY"
    return _PLAIN_WEEK_START.get(dialect) if name == "WEEK" else None


def start_of_week(moment: exp.Expression, first_day: str) -> exp.Expression:
    """The date of the last ``first_day`` on or before ``moment``: back by the days since that day of the week."""
    since = exp.Mod(
        this=exp.Paren(this=exp.Add(this=exp.Anonymous(this="DAYOFWEEK", expressions=[moment.copy()]),
                                    expression=exp.Literal.number(7 - SPARK_DAY[first_day]))),
        expression=exp.Literal.number(7))
    day = exp.Cast(this=moment.copy(), to=exp.DataType.build("DATE"))
    return exp.Anonymous(this="DATE_SUB", expressions=[day, since])
