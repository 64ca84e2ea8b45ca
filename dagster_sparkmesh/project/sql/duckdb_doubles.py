"""DuckDB's DOUBLE results that Spark computes as DECIMAL, and DuckDB's rounding of a DOUBLE (part of
``dialect_functions``; each checked against DuckDB through SQLMesh 0.236.4).

- ``AVG`` (and ``MEAN``) of any number is a DOUBLE in DuckDB, of a DECIMAL column too; Spark's average of a DECIMAL
  is a DECIMAL: written ``CAST(AVG(x) AS DOUBLE)``.
- ``/`` divides into a DOUBLE in DuckDB, two DECIMALs too (``1.005 / 3.0`` is 0.33499999999999996 there, 0.335 in
  Spark): its left operand is cast to DOUBLE, which makes Spark divide the same two doubles.
- ``ROUND(x, n)`` of a DOUBLE rounds the double ``x * 10^n`` half away from zero in DuckDB (``ROUND(1.005, 2)`` is 1.0,
  ``ROUND(0.285, 2)`` 0.28: their binary values lie below the half), where Spark rounds the shortest decimal spelling
  of ``x`` (1.01, 0.29): written ``ROUND(x * POWER(10, n)) / POWER(10, n)`` (Spark's ROUND of a double to a whole
  number is then DuckDB's) where ``x`` is a DOUBLE by its spelling: an average, a division, a cast to DOUBLE or
  FLOAT, a function that returns one, arithmetic with one of those, a SUM, MIN, ANY_VALUE... of one. Any other
  ``x`` (a column whose type only the tables tell) is marked, and written so once the loader knows its type
  (``typed_operands``).

An unaliased projection keeps the name Spark gives the expression as written (``avg(x)``, ``(a / b)``).
"""

from __future__ import annotations

from sqlglot import exp

ROUND_MARKER = "SPARKMESH_TYPED_ROUND"  # a ROUND whose value's type only the tables tell: ``typed_operands``
_DOUBLE = exp.DataType.build("DOUBLE")
_DOUBLE_TYPES = (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT)
_DOUBLE_FUNCTIONS = (exp.Sqrt, exp.Ln, exp.Log, exp.Exp, exp.Pow, exp.Stddev, exp.StddevPop, exp.StddevSamp,
                     exp.Variance, exp.VariancePop, exp.Corr, exp.CovarPop, exp.CovarSamp, exp.Rand)
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Mod)
_OF_ITS_ARGUMENTS_TYPE = (exp.Paren, exp.Neg, exp.Abs, exp.Round, exp.AnyValue, exp.Min, exp.Max, exp.Sum, exp.First,
                          exp.Last, exp.Coalesce, exp.IgnoreNulls, exp.RespectNulls, exp.Window, exp.Filter)
_AGGREGATE_WRAPPERS = (exp.Window, exp.Filter)


def duckdb_double(node: exp.Expression) -> exp.Expression:
    """``node`` (of a DuckDB query, its children already rewritten) as Spark SQL computing DuckDB's number; ``node``
    itself when Spark computes the same."""
    if _is_average(node) and not isinstance(node.parent, _AGGREGATE_WRAPPERS):
        return _named(node, exp.Cast(this=node.copy(), to=_DOUBLE.copy()), node.sql(dialect="spark"))
    if isinstance(node, exp.Div) and not is_double(node.this) and not _is_interval(node):
        division = node.copy()
        division.set("this", exp.Cast(this=division.this, to=_DOUBLE.copy()))
        return _named(node, division, f"({node.sql(dialect='spark')})")
    if isinstance(node, exp.Round):
        return _rounded(node)
    return node


def _is_average(node: exp.Expression) -> bool:
    if isinstance(node, _AGGREGATE_WRAPPERS):
        return _is_average(node.this)
    return isinstance(node, exp.Avg) or (isinstance(node, exp.Anonymous) and node.name.upper() == "MEAN")


def is_double(node: exp.Expression) -> bool:
    """Whether ``node`` is a DOUBLE in DuckDB by its spelling alone (once rewritten here), or by the types of its
    columns once sqlglot annotated them (``typed_operands``)."""
    if isinstance(node, _OF_ITS_ARGUMENTS_TYPE):
        return is_double(node.this)
    if isinstance(node, exp.Cast):
        return node.to.is_type(*_DOUBLE_TYPES)
    if isinstance(node, exp.Div):
        return True  # (its left operand is cast to DOUBLE by then)
    if isinstance(node, exp.Case):  # (a division guarded against a zero divisor: ``duckdb_functions``)
        branches = [case.args["true"] for case in node.args["ifs"]] + [node.args.get("default")]
        return all(is_double(branch) for branch in branches if branch is not None)
    if isinstance(node, _ARITHMETIC):
        return is_double(node.this) or is_double(node.expression)
    if isinstance(node, exp.Column):
        return node.type is not None and node.type.is_type(exp.DataType.Type.DOUBLE)
    return isinstance(node, _DOUBLE_FUNCTIONS)


def _is_interval(division: exp.Div) -> bool:
    return any(isinstance(operand, exp.Interval) for operand in (division.this, division.expression))


def _rounded(node: exp.Round) -> exp.Expression:
    digits = _whole_number(node.args.get("decimals"))
    if not digits or _is_exact(node.this):
        # To a whole number Spark's ROUND of a double is DuckDB's; a computed number of digits: kept.
        return node
    if is_double(node.this):
        return _named(node, rounded_double(node.this.copy(), digits), node.sql(dialect="spark"))
    marker = exp.Anonymous(this=ROUND_MARKER, expressions=[node.this.copy(), node.args["decimals"].copy()])
    return _named(node, marker, node.sql(dialect="spark"))


def _is_exact(node: exp.Expression) -> bool:
    """Whether ``node`` is an exact number by its spelling (a literal, a cast to an integer or DECIMAL): no marker."""
    if isinstance(node, (exp.Paren, exp.Neg)):
        return _is_exact(node.this)
    if isinstance(node, exp.Cast):
        return node.to.is_type(*exp.DataType.INTEGER_TYPES, exp.DataType.Type.DECIMAL)
    return isinstance(node, exp.Literal) and not node.is_string


def rounded_double(value: exp.Expression, digits: int) -> exp.Expression:
    """DuckDB's ``ROUND(value, digits)`` of a DOUBLE as Spark SQL: the double ``value * 10^digits`` rounded to a whole
    number (Spark's ROUND of a double to a whole number is DuckDB's), scaled back."""
    scale = exp.Anonymous(this="POWER", expressions=[exp.Literal.number(10), exp.Literal.number(abs(digits))])
    value = exp.paren(value) if isinstance(value, exp.Binary) else value
    scaled, back = (exp.Mul(this=value, expression=scale), exp.Div) if digits > 0 else (
        exp.Div(this=value, expression=scale), exp.Mul)
    return exp.Paren(this=back(this=exp.Round(this=scaled), expression=scale.copy()))


def _whole_number(decimals: exp.Expression | None) -> int | None:
    if isinstance(decimals, exp.Neg):
        inner = _whole_number(decimals.this)
        return None if inner is None else -inner
    if isinstance(decimals, exp.Literal) and decimals.is_int:
        return int(decimals.name)
    return None


def _named(node: exp.Expression, rewritten: exp.Expression, name: str) -> exp.Expression:
    """``rewritten``, aliased to the name Spark gives ``node`` where ``node`` is an unaliased projection."""
    if isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
        return exp.alias_(rewritten, name, quoted=True)
    return rewritten
