"""A date or timestamp plus a number of units (Snowflake's and T-SQL's ``DATEADD(unit, n, x)``, Trino's
``date_add('unit', n, x)``, BigQuery's ``DATE_ADD(x, INTERVAL n unit)``...) as Spark computes the same (part of
``dialect_functions``; checked against SQLMesh 0.236.4 on DuckDB).

sqlglot writes such an addition for Spark as ``DATE_ADD(x, n)``, which adds *days* and returns a DATE, whatever the
unit: ``DATEADD(hour, 2, ts)`` was two days later at midnight, ``DATEADD(day, 1, ts)`` lost the time of day. Written
instead:
- an hour, minute, second, millisecond or microsecond: Spark's ``TIMESTAMPADD(unit, n, x)``, a TIMESTAMP as in those
  dialects (of a DATE too);
- a month, quarter or year: ``x + n * INTERVAL 'k' MONTH``, which keeps a DATE a DATE and a TIMESTAMP a TIMESTAMP,
  as the dialects do (end of month clamped, as ``ADD_MONTHS``);
- a day or week by a whole number written in the query: ``x + INTERVAL 'n' DAY``, which keeps the type too. By a
  computed number Spark has no spelling that keeps both types (``n * INTERVAL`` makes a DATE a TIMESTAMP): left as
  sqlglot writes it, right for a DATE (a known difference for a TIMESTAMP's time of day).
"""

from __future__ import annotations

from sqlglot import exp

_SUB_DAY = frozenset({"HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"})
_MONTHS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}
_DAYS = {"DAY": 1, "WEEK": 7}


def added_in_units(node: exp.DateAdd | exp.DateSub) -> exp.Expression:
    """``node`` written so that its unit counts, or ``node`` itself when sqlglot's spelling is right already."""
    unit = node.args.get("unit")
    if unit is None or isinstance(node.expression, exp.Interval):
        return node  # an INTERVAL operand: Spark adds it as it is
    name = unit.name.upper()
    subtracted = isinstance(node, exp.DateSub)
    value = exp.paren(node.this.copy()) if isinstance(node.this, exp.Binary) else node.this.copy()
    if name in _SUB_DAY:
        return exp.TimestampAdd(this=value, expression=_signed(node.expression, subtracted), unit=exp.var(name))
    if name in _MONTHS:
        months = exp.Interval(this=exp.Literal.string(str(_MONTHS[name])), unit=exp.var("MONTH"))
        return exp.Add(this=value, expression=exp.Mul(this=_signed(node.expression, subtracted), expression=months))
    count = _whole_number(node.expression)
    if name in _DAYS and count is not None:
        days = count * _DAYS[name] * (-1 if subtracted else 1)
        return exp.Add(this=value, expression=exp.Interval(this=exp.Literal.string(str(days)), unit=exp.var("DAY")))
    return node


def _signed(amount: exp.Expression, subtracted: bool) -> exp.Expression:
    count = _whole_number(amount)
    if count is not None:  # (BigQuery spells it as a string)
        return exp.Literal.number(-count if subtracted else count)
    amount = exp.paren(amount.copy()) if isinstance(amount, exp.Binary) else amount.copy()
    return exp.Neg(this=amount) if subtracted else amount


def _whole_number(amount: exp.Expression) -> int | None:
    """The whole number ``amount`` spells (``2``, ``-2``, BigQuery's ``'2'``), else None."""
    if isinstance(amount, exp.Neg):
        inner = _whole_number(amount.this)
        return None if inner is None else -inner
    if isinstance(amount, exp.Literal) and amount.name.lstrip("-").isdigit():
        return int(amount.name)
    return None
