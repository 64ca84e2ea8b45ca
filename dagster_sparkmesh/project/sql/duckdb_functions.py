"""DuckDB idioms that Spark refuses, or answers otherwise, once sqlglot wrote them as Spark SQL (part of
``dialect_functions``; each checked against DuckDB 1.5.6, the DuckDB SQLMesh 0.236.4 runs).

- **Division by zero.** DuckDB's ``/`` divides as DOUBLEs (``duckdb_doubles``) and gives what IEEE 754 gives for a
  zero divisor: ``10 / 0`` is ``inf``, ``-10 / 0`` ``-inf``, ``0 / 0`` ``NaN``, NULL stays NULL. Spark, in ANSI
  mode, stops the query (DIVIDE_BY_ZERO). Written ``CASE WHEN y = 0 THEN x * POWER(y, -1) ELSE x / y END``: Spark's
  POWER of a zero to the -1 is the signed infinity, and the product is IEEE's quotient.
- **Integer division and remainder by zero.** DuckDB's ``//`` and ``%`` give NULL for a zero divisor (``%`` of a
  DOUBLE gives ``NaN``); Spark stops the query. Written ``x DIV NULLIF(y, 0)`` and ``x % NULLIF(y, 0)``; a remainder
  of a DOUBLE by its spelling (a cast, a division...) gives ``NaN`` there. A DOUBLE column's remainder by zero
  gives NULL here, as its type only the tables tell.
  A divisor that is a number other than zero is left as written.
- **STRLEN** counts the bytes of the UTF-8 text ('héllo' is 6), where ``LENGTH`` counts characters: Spark's
  ``OCTET_LENGTH``.
- **YEARWEEK** is the ISO year times 100 plus the ISO week (2020-12-31 is 202053, 2024-12-30 202501): Spark's
  ``EXTRACT(YEAROFWEEK ...)`` and ``EXTRACT(WEEK ...)``, as a BIGINT like DuckDB's.
- **An element of a list** (``string_split(s, ',')[-1]``): DuckDB counts from 1, from the end for a negative index,
  and gives NULL for 0 and an index past either end. sqlglot moves a literal index to Spark's count from 0, so -1
  becomes -2, which Spark refuses, as it refuses any index past the end. Written ``TRY_ELEMENT_AT(x, index)``, which
  counts as DuckDB does (and looks a map's key up as DuckDB does: ``m[1]`` is the value of key 1); index 0 is NULL
  for a list by its spelling (a split, an array...), and left as written otherwise. An index that is no literal
  (a column) is left by sqlglot as DuckDB counts it: written so for a list by its spelling only.
- **TIMEZONE(zone, ts)**: of a naive timestamp, the instant its wall clock reads in ``zone`` (Spark's
  ``TO_UTC_TIMESTAMP``); of a TIMESTAMPTZ (``CURRENT_TIMESTAMP``, ``NOW()``, a cast), its wall clock in ``zone``
  (``CONVERT_TIMEZONE``). Written by the argument's spelling, or marked and written once the loader knows its type
  (``typed_operands``: Spark's TIMESTAMP_NTZ is DuckDB's TIMESTAMP, Spark's TIMESTAMP DuckDB's TIMESTAMPTZ); left as
  written where the type stays unknown (Spark then says it has no TIMEZONE function).
- **EPOCH_MS(ts)** of a timestamp or a date is its milliseconds since 1970 (a BIGINT, truncated toward zero);
  sqlglot writes ``TIMESTAMP_MILLIS(ts)``, the inverse, which is right for a number only. Written
  ``(UNIX_MICROS(CAST(ts AS TIMESTAMP)) DIV 1000)`` where ``ts`` is a moment by its spelling (a cast to a timestamp
  or a date, a timestamp literal, ``CURRENT_TIMESTAMP``, ``NOW()``); any other argument but a number is marked, and
  written so once the loader knows it is a timestamp or a date (``typed_operands``).

An unaliased projection keeps the name Spark gives the expression sqlglot writes (``(x / y)``, ``(x % y)``).
"""

from __future__ import annotations

from sqlglot import exp

from dagster_sparkmesh.project.sql.duckdb_doubles import duckdb_double, is_double
from dagster_sparkmesh.project.sql.typed_operands import MILLIS_MARKER, ZONE_MARKER

_DOUBLE = exp.DataType.build("DOUBLE")
_LISTS = (exp.Split, exp.RegexpSplit, exp.Array, exp.ArrayAgg, exp.ArrayConcat, exp.StringToArray, exp.ArraySort,
          exp.ArrayDistinct, exp.ArrayReverse)
_TYPE = exp.DataType.Type
_NAIVE = (_TYPE.TIMESTAMP, _TYPE.TIMESTAMPNTZ, _TYPE.DATETIME)
_ZONED = (_TYPE.TIMESTAMPTZ, _TYPE.TIMESTAMPLTZ)
_MOMENTS = (*_NAIVE, *_ZONED, _TYPE.DATE)
_NOW = ("NOW", "GET_CURRENT_TIMESTAMP", "TRANSACTION_TIMESTAMP")


def duckdb_function(node: exp.Expression) -> exp.Expression:
    """``node`` (of a DuckDB query, its children already rewritten) as Spark SQL returning DuckDB's value; ``node``
    itself where sqlglot's Spark SQL already does."""
    if isinstance(node, exp.Div):
        return _divided(node)
    if isinstance(node, (exp.IntDiv, exp.Mod)) and _may_be_zero(node.expression):
        return _named(node, _null_by_zero(node))
    if isinstance(node, exp.Bracket):
        return _element(node)
    if isinstance(node, exp.UnixToTime) and _is_milliseconds(node) and _is_moment(node.this):
        return _milliseconds(node.this)
    if isinstance(node, exp.UnixToTime) and _is_milliseconds(node) and not _is_number(node.this):
        # A moment or a number: the loader writes it once it knows the column's type.
        return exp.Anonymous(this=MILLIS_MARKER, expressions=[node.this.copy(), node.args["scale"].copy()])
    if isinstance(node, exp.Anonymous):
        return _function(node)
    return node


def _milliseconds(moment: exp.Expression) -> exp.Expression:
    """DuckDB's EPOCH_MS of a moment: Spark's UNIX_MILLIS floors, where DuckDB truncates toward zero (a moment before
    1970 with a fraction of a millisecond: 0 there, -1 in Spark); DIV truncates."""
    timestamp = exp.Cast(this=moment.copy(), to=exp.DataType.build("TIMESTAMP"))
    micros = exp.Anonymous(this="UNIX_MICROS", expressions=[timestamp])
    return exp.Paren(this=exp.IntDiv(this=micros, expression=exp.Literal.number(1000)))  # (2 * it: not 2 * micros)


def _divided(node: exp.Div) -> exp.Expression:
    """DuckDB's DOUBLE division (``duckdb_double``), giving IEEE's infinities and NaN for a zero divisor."""
    doubled = duckdb_double(node)
    division = doubled.this if isinstance(doubled, exp.Alias) else doubled
    if not isinstance(division, exp.Div) or not _may_be_zero(division.expression) or _is_interval(division):
        return doubled
    by_zero = exp.Mul(this=_wrapped(division.this.copy()), expression=exp.Anonymous(
        this="POWER", expressions=[division.expression.copy(), exp.Literal.number(-1)]))
    guarded = exp.Case(ifs=[exp.If(this=_is_zero(division.expression), true=by_zero)], default=division.copy())
    return _named(node, guarded, name=doubled.alias if isinstance(doubled, exp.Alias) else None)


def _null_by_zero(node: exp.IntDiv | exp.Mod) -> exp.Expression:
    if isinstance(node, exp.Mod) and (is_double(node.this) or is_double(node.expression)):
        nan = exp.Cast(this=exp.Literal.string("NaN"), to=_DOUBLE.copy())  # DuckDB's fmod: NULL stays NULL
        by_zero = exp.Mul(this=_wrapped(node.this.copy()), expression=nan)
        return exp.Case(ifs=[exp.If(this=_is_zero(node.expression), true=by_zero)], default=node.copy())
    rewritten = node.copy()
    rewritten.set("expression", exp.Nullif(this=node.expression.copy(), expression=exp.Literal.number(0)))
    return rewritten


def _may_be_zero(divisor: exp.Expression) -> bool:
    number = _literal_number(divisor)
    return number is None or number == 0


def _literal_number(node: exp.Expression) -> float | None:
    if isinstance(node, exp.Paren):
        return _literal_number(node.this)
    if isinstance(node, exp.Neg):
        inner = _literal_number(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and not node.is_string:
        return float(node.name)
    return None


def _is_zero(divisor: exp.Expression) -> exp.Expression:
    return exp.EQ(this=_wrapped(divisor.copy()), expression=exp.Literal.number(0))


def _wrapped(operand: exp.Expression) -> exp.Expression:
    return exp.paren(operand) if isinstance(operand, (exp.Binary, exp.Case)) else operand


def _is_interval(division: exp.Div) -> bool:
    return any(isinstance(operand, exp.Interval) for operand in (division.this, division.expression))


def _element(node: exp.Bracket) -> exp.Expression:
    """An element of a list (or a map's value) by DuckDB's index: see the module's docstring."""
    if len(node.expressions) != 1 or node.args.get("json_access") or node.args.get("safe"):
        return node
    index, is_list = node.expressions[0], isinstance(node.this, _LISTS)
    moved = _literal_number(index)
    if moved is not None and (moved != int(moved) or isinstance(index, exp.Paren) or not _may_be_list(node.this)):
        return node
    if moved is None:  # a column: not moved by sqlglot (its type is unknown), DuckDB's index as written
        if not is_list or not isinstance(index, exp.Column):
            return node
        # (Spark's index is an INT: a BIGINT column is cast.)
        duckdb_index = exp.Cast(this=exp.Nullif(this=index.copy(), expression=exp.Literal.number(0)),
                                to=exp.DataType.build("INT"))
    elif int(moved) + 1 == 0:
        if not is_list:
            return node
        duckdb_index = exp.Cast(this=exp.Null(), to=exp.DataType.build("INT"))
    else:
        duckdb_index = _integer(int(moved) + 1)
    return exp.Anonymous(this="TRY_ELEMENT_AT", expressions=[node.this.copy(), duckdb_index])


def _may_be_list(value: exp.Expression) -> bool:
    """Whether sqlglot moved a literal index of ``value`` to Spark's count (it does for a list or an unknown type)."""
    kind = value.type.this if value.type else exp.DataType.Type.UNKNOWN
    constructed = isinstance(value, (exp.Struct, exp.ToMap))  # (a map or struct literal: not moved)
    return kind in (exp.DataType.Type.UNKNOWN, exp.DataType.Type.ARRAY) and not constructed


def _integer(value: int) -> exp.Expression:
    literal = exp.Literal.number(abs(value))
    return exp.Neg(this=literal) if value < 0 else literal


def _function(node: exp.Anonymous) -> exp.Expression:
    name, arguments = node.name.upper(), node.expressions
    if name == "STRLEN" and len(arguments) == 1:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=arguments)
    if name == "YEARWEEK" and len(arguments) == 1:
        year, week = (exp.Extract(this=exp.var(unit), expression=arguments[0].copy())
                      for unit in ("YEAROFWEEK", "WEEK"))
        sum_ = exp.Add(this=exp.Mul(this=year, expression=exp.Literal.number(100)), expression=week)
        return exp.Cast(this=sum_, to=exp.DataType.build("BIGINT"))
    if name == "TIMEZONE" and len(arguments) == 2:
        return _in_zone(arguments[0], arguments[1], node)
    return node


def _in_zone(zone: exp.Expression, moment: exp.Expression, node: exp.Expression) -> exp.Expression:
    if _is_zoned(moment):
        return exp.Anonymous(this="CONVERT_TIMEZONE", expressions=[zone.copy(), moment.copy()])
    if _is_cast_to(moment, _NAIVE):
        return exp.Anonymous(this="TO_UTC_TIMESTAMP", expressions=[moment.copy(), zone.copy()])
    if moment.is_string:
        return node
    return exp.Anonymous(this=ZONE_MARKER, expressions=[moment.copy(), zone.copy()])  # written once its type is known


def _is_zoned(moment: exp.Expression) -> bool:
    now = isinstance(moment, exp.Anonymous) and moment.name.upper() in _NOW
    return now or isinstance(moment, exp.CurrentTimestamp) or _is_cast_to(moment, _ZONED)


def _is_cast_to(node: exp.Expression, types: tuple[exp.DataType.Type, ...]) -> bool:
    return isinstance(node, exp.Cast) and node.to.is_type(*types)


def _is_moment(node: exp.Expression) -> bool:
    return _is_zoned(node) or _is_cast_to(node, _MOMENTS)


def _is_number(node: exp.Expression) -> bool:
    numbers = (*exp.DataType.INTEGER_TYPES, exp.DataType.Type.DECIMAL, *exp.DataType.FLOAT_TYPES)
    return _literal_number(node) is not None or _is_cast_to(node, numbers)


def _is_milliseconds(node: exp.UnixToTime) -> bool:
    scale = node.args.get("scale")
    plain = not any(node.args.get(key) for key in ("zone", "hours", "minutes", "format", "target_type"))
    return plain and isinstance(scale, exp.Literal) and scale.name == "3"


def _named(node: exp.Expression, rewritten: exp.Expression, name: str | None = None) -> exp.Expression:
    """``rewritten``, aliased to the name Spark gives sqlglot's ``node`` where ``node`` is an unaliased projection."""
    if isinstance(rewritten, exp.Alias) or not (isinstance(node.parent, exp.Select) and node.arg_key == "expressions"):
        return rewritten
    return exp.alias_(rewritten, name or f"({node.sql(dialect='spark')})", quoted=True)
