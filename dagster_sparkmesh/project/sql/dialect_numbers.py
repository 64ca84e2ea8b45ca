"""Numbers of another dialect whose meaning sqlglot's transpiling to Spark changes, written as Spark SQL that
returns what the source dialect returns (part of ``dialect_functions``; each checked on Spark):

- a DECIMAL or NUMERIC without precision, DECIMAL(10, 0) in Spark, which dropped the fraction of PostgreSQL's
  ``ROUND(AVG(x)::numeric, 2)``: each dialect's own default (``_BARE_DECIMALS``);
- ``GREATEST`` / ``LEAST``, NULL in Snowflake, BigQuery and Trino when an argument is, where Spark skips NULLs;
- a number cast to an integer type, rounded in PostgreSQL, DuckDB, Snowflake and BigQuery, truncated by Spark;
  a hexadecimal string ('0x1F') cast to one, 31 in DuckDB and BigQuery, NULL in Spark;
- ``TRUNC(x, n)`` of a number, toward zero at ``n`` decimals: Spark's TRUNC is for dates.
"""

from __future__ import annotations

from sqlglot import exp

from dagster_sparkmesh.macros.builtins.star import CAST_TO_OWN_TYPE

_BARE_DECIMALS = {
    "postgres": "DECIMAL(38, 18)", "materialize": "DECIMAL(38, 18)", "risingwave": "DECIMAL(38, 18)",
    "redshift": "DECIMAL(18, 0)", "tsql": "DECIMAL(18, 0)", "bigquery": "DECIMAL(38, 9)",
    "trino": "DECIMAL(38, 0)", "presto": "DECIMAL(38, 0)", "athena": "DECIMAL(38, 0)",
}
"""A DECIMAL / NUMERIC without precision in each dialect (Spark's is DECIMAL(10, 0)): PostgreSQL's keeps every digit,
approached by 20 whole and 18 fractional digits; the others' defaults as their documentation gives them."""
_ROUNDING_CASTS = frozenset({"postgres", "duckdb", "redshift", "materialize", "risingwave", "snowflake", "bigquery"})
_INTEGRAL = (exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.INT, exp.DataType.Type.BIGINT)
_INTEGRAL_FUNCTIONS = (exp.Count, exp.RowNumber, exp.Rank, exp.DenseRank, exp.Length, exp.Year, exp.Month, exp.Day,
                       exp.DayOfWeek, exp.DayOfWeekIso, exp.Extract, exp.DateDiff)
_HALF_EVEN_DOUBLES = frozenset({"postgres", "duckdb", "redshift", "materialize", "risingwave"})
_HEX_SPELLINGS = {"duckdb": "^()0[xX]0*([0-9a-fA-F]+)$", "bigquery": "^([+-]?)0[xX]0*([0-9a-fA-F]+)$"}
"""The text each dialect's cast to an integer reads as hexadecimal (group 1 the sign, group 2 the digits after any
leading zeros). DuckDB (1.5, checked) reads '0x1F' and '0X1f', up to its type's range, but no sign and no surrounding
space; BigQuery documents '-0x123' as -291, its surrounding spaces trimmed as for its decimal numbers. Snowflake,
Redshift and PostgreSQL before 16 read no hex (PostgreSQL 16's is left: its users' older servers don't)."""
_HEX_DIGITS_IN_64_BITS = 16
_TOO_LARGE = "1" + "0" * 20
"""Beyond any integer type: a hex number of more than 16 digits fails the cast as any too large
number does (NULL for a TRY_CAST, an error for a CAST), where Spark's CONV would wrap it to 2^64 - 1."""


def number_rewrite(node: exp.Expression, dialect: str) -> exp.Expression:
    """``node`` written so that Spark computes the number ``dialect`` computes (``node`` itself when it does)."""
    if isinstance(node, exp.DataType):
        return with_precision(node, dialect)
    if isinstance(node, exp.Trunc) and node.args.get("decimals") is not None:
        return _truncated(node)
    if isinstance(node, (exp.Greatest, exp.Least)) and node.args.get("ignore_nulls") is False:
        return _null_if_any_null(node)
    if isinstance(node, exp.Cast) and dialect in _ROUNDING_CASTS and node.to.is_type(*_INTEGRAL) and not _integral(node):
        return _reading_hex(node, _rounded_cast(node, half_even_doubles=dialect in _HALF_EVEN_DOUBLES), dialect)
    return node


def spark_data_type(text: str, dialect: str) -> exp.DataType:
    """A type written in ``dialect`` (a declared column's) as the Spark type that holds what the dialect holds."""
    return with_precision(exp.DataType.build(text, dialect=dialect), dialect.lower())


def with_precision(data_type: exp.DataType, dialect: str) -> exp.DataType:
    if data_type.this == exp.DataType.Type.DECIMAL and not data_type.expressions and dialect in _BARE_DECIMALS:
        return exp.DataType.build(_BARE_DECIMALS[dialect])
    return data_type


def _truncated(node: exp.Trunc) -> exp.Expression:
    """``TRUNC(x, n)``, toward zero at ``n`` decimals (PostgreSQL, Snowflake...): Spark's TRUNC is for dates."""
    value, decimals = node.this, node.args["decimals"]
    floor = exp.Anonymous(this="FLOOR", expressions=[value.copy(), decimals.copy()])
    ceil = exp.Anonymous(this="CEIL", expressions=[value.copy(), decimals.copy()])
    positive = exp.GTE(this=value.copy(), expression=exp.Literal.number(0))
    return exp.If(this=positive, true=floor, false=ceil)


def _null_if_any_null(node: exp.Expression) -> exp.Expression:
    """Snowflake's, BigQuery's and Trino's GREATEST / LEAST are NULL when an argument is; Spark's skip NULLs."""
    arguments = [node.this, *node.expressions]
    any_null = exp.or_(*(exp.Is(this=argument.copy(), expression=exp.Null()) for argument in arguments
                         if not isinstance(argument, exp.Literal)) or exp.false())
    spark = node.copy()
    spark.set("ignore_nulls", None)
    return exp.Case(ifs=[exp.If(this=any_null, true=exp.Null())], default=spark)


def _rounded_cast(node: exp.Cast, half_even_doubles: bool) -> exp.Expression:
    """A number cast to an integer type is rounded in PostgreSQL, DuckDB, Snowflake and BigQuery (DuckDB and
    PostgreSQL round a DOUBLE half to even, a DECIMAL half away from zero; the others both half away from zero);
    Spark's cast truncates. The value goes through a DECIMAL wide enough for any BIGINT and a double's digits (a
    string or a boolean casts there as to an integer), then is rounded, then cast as written (a TRY_CAST stays one)."""
    exact = node.copy()
    exact.set("to", exp.DataType.build("DECIMAL(38, 18)"))
    half_away = exp.Round(this=exact)
    rounded: exp.Expression = half_away
    if half_even_doubles:
        is_double = exp.In(this=exp.Anonymous(this="TYPEOF", expressions=[node.this.copy()]),
                           expressions=[exp.Literal.string("double"), exp.Literal.string("float")])
        bankers = exp.Anonymous(this="BROUND", expressions=[exact.copy()])
        rounded = exp.Case(ifs=[exp.If(this=is_double, true=bankers)], default=half_away)
    cast = node.copy()
    cast.set("this", rounded)
    return cast


def _reading_hex(node: exp.Cast, rounded: exp.Expression, dialect: str) -> exp.Expression:
    """``rounded`` (``node`` as a number rounded) that reads a hexadecimal string as ``dialect`` does: Spark's casts
    read none, so its digits go through CONV to decimal text, cast as written (a whole number: nothing to round; out
    of the type's range NULL for a TRY_CAST, an error for a CAST). Only for a string: TYPEOF folds to a constant, so
    the branch costs nothing on a numeric column."""
    spelling = _HEX_SPELLINGS.get(dialect)
    if spelling is None:
        return rounded
    value = node.this
    text: exp.Expression = exp.cast(value.copy(), "STRING")
    if dialect == "bigquery":
        text = exp.Trim(this=text)
    pattern = exp.Literal.string(spelling)
    is_hex = exp.and_(
        exp.EQ(this=exp.Anonymous(this="TYPEOF", expressions=[value.copy()]), expression=exp.Literal.string("string")),
        exp.RegexpLike(this=text.copy(), expression=pattern.copy()))
    sign = exp.RegexpExtract(this=text.copy(), expression=pattern.copy(), group=exp.Literal.number(1))
    digits = exp.RegexpExtract(this=text.copy(), expression=pattern.copy(), group=exp.Literal.number(2))
    too_long = exp.GT(this=exp.Length(this=digits.copy()), expression=exp.Literal.number(_HEX_DIGITS_IN_64_BITS))
    decimal_text = exp.Case(
        ifs=[exp.If(this=too_long, true=exp.Literal.string(_TOO_LARGE))],
        default=exp.Anonymous(this="CONV", expressions=[digits, exp.Literal.number(16), exp.Literal.number(10)]))
    from_hex = node.copy()
    from_hex.set("this", exp.Concat(expressions=[sign, decimal_text]))
    return exp.Case(ifs=[exp.If(this=is_hex, true=from_hex)], default=rounded)


def _integral(cast: exp.Cast) -> bool:
    """Whether the value ``cast`` converts is a whole number by its spelling or its declaration (nothing to round)."""
    return bool(cast.meta.get(CAST_TO_OWN_TYPE)) or _whole_number(cast.this)


def _whole_number(node: exp.Expression) -> bool:
    if isinstance(node, exp.Paren):
        return _whole_number(node.this)
    if isinstance(node, exp.Literal):
        return node.is_int or (node.is_string and node.name.strip().lstrip("+-").isdigit())
    if isinstance(node, exp.Cast):
        return node.to.is_type(*_INTEGRAL)
    return isinstance(node, (exp.Boolean, *_INTEGRAL_FUNCTIONS))
