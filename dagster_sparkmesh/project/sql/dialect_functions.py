"""Functions of another dialect whose meaning sqlglot's transpiling to Spark changes, written as Spark SQL that
returns what the source dialect returns (each checked on Spark against the dialect's documented results):

- an epoch in seconds as a timestamp (DuckDB's and PostgreSQL's ``TO_TIMESTAMP(x)``, BigQuery's
  ``TIMESTAMP_SECONDS``): sqlglot writes ``CAST(FROM_UNIXTIME(x) AS TIMESTAMP)``, which drops the fraction of a second;
  ``TIMESTAMP_SECONDS(x)`` keeps it;
- the day of the week: PostgreSQL, DuckDB, Redshift and Snowflake count from Sunday = 0 (``EXTRACT(dow ...)``,
  ``DATE_PART('dow', ...)``, DuckDB's and Snowflake's ``DAYOFWEEK``), Spark from Sunday = 1; and the ISO day
  (Monday = 1 ... Sunday = 7), which sqlglot writes as ``DAYOFWEEK(d) % 7 + 1`` (Sunday = 2), is Spark's
  ``EXTRACT(DAYOFWEEK_ISO ...)``;
- a date minus a date, a whole number of days in PostgreSQL, DuckDB, Redshift and Snowflake, an interval in Spark:
  ``DATEDIFF(a, b)`` where both sides are dates by their spelling (a cast to DATE, a date literal,
  ``CURRENT_DATE``); a subtraction of columns is marked, and written once their types are known (``typed_operands``);
- a cast of a set-returning function (PostgreSQL's ``generate_series(a, b, step)::date``), which sqlglot writes as
  ``CAST(EXPLODE(SEQUENCE(...)) AS DATE)`` and Spark refuses (a generator inside an expression): the cast is
  applied to each element, ``EXPLODE(TRANSFORM(SEQUENCE(...), item -> CAST(item AS DATE)))``;
- ``CONCAT`` in PostgreSQL and DuckDB, which skips NULL arguments: sqlglot writes ``COALESCE(x, '')``, which Spark
  types as a DOUBLE for a DECIMAL ``x`` (``-87.630`` became ``-87.63``, ``0.0001`` became ``1.0E-4``, and hash keys
  built from them changed); each argument is cast to a string first, as those dialects print it;
- a function a Python macro built by name (``exp.func("SHA256", x)``, no dialect given): read again in the model's
  dialect, where it may name a function Spark spells otherwise (DuckDB's ``SHA256(x)`` is ``SHA2(x, 256)``);
- DuckDB's ``TRY_STRPTIME(text, format)``, which sqlglot leaves as it is (Spark has no such function), and the
  other dialects' parses that give NULL for text that does not match (Snowflake's ``TRY_TO_TIMESTAMP``,
  ``TRY_TO_DATE``), which sqlglot writes as Spark's ``TO_TIMESTAMP`` / ``TO_DATE``, which fail on such text:
  Spark's ``TRY_TO_TIMESTAMP`` with the format in Spark's pattern letters (cast to DATE for a date);
- a difference of dates or times in a unit, which DuckDB, Snowflake and BigQuery's ``DATE_DIFF`` (and
  ``DATETIME_DIFF``) count as the unit's boundaries crossed and Spark as whole units elapsed: both sides are
  truncated to the unit first (weeks, which start on a different day in each dialect: ``week_boundaries.py``);
- dates and times in a time zone (DuckDB's ``CURRENT_DATE(zone)``, BigQuery's ``DATETIME(ts, zone)``, ...), the
  epoch in seconds with its fraction (``EXTRACT(EPOCH ...)``): Spark has no function of that name and shape;
- everyday text and date functions of PostgreSQL, Snowflake and BigQuery (``to_char``, ``string_to_array``,
  ``initcap``, weeks starting on Sunday, ...): see ``text_and_date_functions.py``;
- numbers: see ``dialect_numbers.py``;
- DuckDB's averages and divisions (DOUBLE) and its rounding of a DOUBLE: see ``duckdb_doubles.py``;
- DuckDB's divisions by zero, STRLEN, YEARWEEK, list indexes, TIMEZONE and EPOCH_MS: see ``duckdb_functions.py``;
- percentiles (``WITHIN GROUP``, DuckDB's ``QUANTILE_CONT`` / ``QUANTILE_DISC``): see ``percentiles.py``;
- LIKE patterns with a backslash where the dialect has no default escape: see ``like_patterns.py``;
- DuckDB's ``LEN`` of a list (by its spelling: a split, an array), which Spark refused;
- DuckDB's ``TRY_CAST`` of text to a date or a timestamp, NULL for a partial date ('2023-01') that Spark completes;
- DuckDB's ``DAYNAME`` / ``MONTHNAME``, the whole names where Spark's are abbreviated;
- ``REGEXP_REPLACE`` of DuckDB and PostgreSQL, which replaces the first match only unless flagged 'g', and reads
  its flags and replacement in its own way;
- ``ARRAY_AGG`` with an ORDER BY, or in a dialect that keeps NULL elements (``ordered_aggregates.py``);
- ``QUALIFY`` over ``SELECT *``: Spark has no QUALIFY, and sqlglot's rewrite (a subquery with the window as a column
  ``_w``) selected ``*`` of it, so the table got a column ``_w``; the outer query now leaves it out.

Rewrites go from the leaves up, so a function inside a rewritten one (a day of the week inside a CONCAT) is
rewritten too.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.spark import Spark
from sqlglot.transforms import eliminate_qualify

from dagster_sparkmesh.project.sql.date_arithmetic import added_in_units
from dagster_sparkmesh.project.sql.dialect_numbers import number_rewrite
from dagster_sparkmesh.project.sql.duckdb_doubles import duckdb_double
from dagster_sparkmesh.project.sql.duckdb_functions import duckdb_function
from dagster_sparkmesh.project.sql.like_patterns import literal_backslashes
from dagster_sparkmesh.project.sql.ordered_aggregates import ordered_array_agg
from dagster_sparkmesh.project.sql.percentiles import exact_percentile
from dagster_sparkmesh.project.sql.regexp_groups import extracted_group
from dagster_sparkmesh.project.sql.text_and_date_functions import text_and_date_rewrite
from dagster_sparkmesh.project.sql.typed_operands import DAYS_MARKER, unmarked
from dagster_sparkmesh.project.sql.week_boundaries import weeks_crossed

_SUNDAY_ZERO_DIALECTS = frozenset({"postgres", "duckdb", "redshift", "snowflake", "materialize", "risingwave"})
"""Also the dialects in which a date minus a date is a number of days."""
_ISO_DOW_DIALECTS = frozenset({"trino", "presto", "athena"})  # their EXTRACT(DOW ...) is the ISO day
_DAY_OF_WEEK_UNITS = frozenset({"DOW", "DAYOFWEEK", "WEEKDAY"})
_ISO_UNITS = frozenset({"ISODOW", "DAYOFWEEK_ISO", "DOW_ISO"})
_DAY_UNITS = _DAY_OF_WEEK_UNITS | _ISO_UNITS
_SAFE_PARSES = (exp.StrToTime, exp.StrToDate, exp.TsOrDsToDate)
_DUCKDB_DATE_TEXT = {
    exp.DataType.Type.DATE: r"^\s*\d{4}-\d{1,2}-\d{1,2}",
    exp.DataType.Type.TIMESTAMP: r"^\s*\d{4}-\d{1,2}-\d{1,2}(.*\S)?$",
    exp.DataType.Type.TIMESTAMPNTZ: r"^\s*\d{4}-\d{1,2}-\d{1,2}(.*\S)?$",
}
"""The text DuckDB's TRY_CAST reads as a date (a whole year-month-day, spaces around) or a timestamp (no trailing
space); Spark's also reads '2023' and '2023-01' as 2023-01-01, where DuckDB gives NULL."""
_ARRAYS = (exp.Split, exp.RegexpSplit, exp.Array, exp.ArrayAgg, exp.ArrayConcat, exp.StringToArray)
_FRACTIONAL_EPOCHS = frozenset({"duckdb", "trino", "presto", "athena"})  # their epoch(ts) keeps the microseconds
_BOUNDARY_UNITS = frozenset({"YEAR", "QUARTER", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"})


def with_dialect_functions(statement: exp.Expression, dialect: str) -> exp.Expression:
    """``statement`` (parsed from ``dialect``) with the functions above written so that Spark returns the same."""
    dialect = dialect.lower()
    for node in reversed(list(statement.walk())):  # breadth-first, reversed: every node after its descendants
        rewritten = _rewritten(node, dialect)
        if rewritten is not node and _named_projection(node):
            # Spark names an unaliased ``CAST(x AS INT)`` column x; its rewrite keeps that name.
            rewritten = exp.alias_(rewritten, node.this.this.copy())
        if rewritten is not node:
            if node is statement:
                statement = rewritten
            else:
                node.replace(rewritten)
    return statement


def _named_projection(node: exp.Expression) -> bool:
    return isinstance(node, exp.Cast) and isinstance(node.this, exp.Column) and isinstance(node.parent, exp.Select) \
        and node.arg_key == "expressions"


def _rewritten(node: exp.Expression, dialect: str) -> exp.Expression:
    if dialect == "duckdb" and (duckdb := duckdb_function(node)) is not node:  # (its divisions: duckdb_double)
        return duckdb
    if dialect == "duckdb" and (doubled := duckdb_double(node)) is not node:
        return doubled
    if (text_or_date := text_and_date_rewrite(node, dialect)) is not node:
        return text_or_date
    if isinstance(node, exp.UnixToTime) and _plain_seconds(node):
        return exp.Anonymous(this="TIMESTAMP_SECONDS", expressions=[node.this])
    if isinstance(node, exp.DayOfWeekIso):
        return _iso_day(node.this)
    if isinstance(node, exp.DayOfWeek) and dialect in _SUNDAY_ZERO_DIALECTS:
        return _from_sunday_zero(node.this)
    if isinstance(node, exp.Extract) and _day_unit(node.this) == "EPOCH":
        return _epoch_seconds(node.expression)
    if isinstance(node, exp.TimeToUnix) and dialect in _FRACTIONAL_EPOCHS:
        return _epoch_seconds(node.this)
    if isinstance(node, exp.Extract):
        return _extracted_day(node, dialect)
    if isinstance(node, exp.Anonymous):
        return _anonymous(node, dialect)
    if isinstance(node, (exp.Like, exp.ILike)):
        return literal_backslashes(node, dialect)
    if type(node) is exp.Concat and node.args.get("coalesce"):  # (CONCAT_WS skips NULLs in Spark as well)
        return _concat_of_strings(node)
    if isinstance(node, (exp.DateAdd, exp.DateSub)):
        return added_in_units(node)
    if isinstance(node, exp.RegexpExtract):
        return extracted_group(node, dialect)
    if isinstance(node, exp.IsInf):
        return exp.Paren(this=_infinite(node.this))
    if isinstance(node, exp.Length) and isinstance(node.this, _ARRAYS):  # DuckDB's LEN of a list: its size
        return exp.ArraySize(this=node.this)
    if isinstance(node, (exp.WithinGroup, exp.PercentileCont, exp.PercentileDisc)):
        return exact_percentile(node)
    if isinstance(node, exp.TryCast) and dialect == "duckdb" and node.to.is_type(*_DUCKDB_DATE_TEXT):
        return _duckdb_date_text(node)
    if isinstance(node, exp.Cast) and type(node.this) in (exp.Explode, exp.ExplodingGenerateSeries):
        return _cast_each(node)
    if isinstance(node, exp.Sub) and dialect in _SUNDAY_ZERO_DIALECTS:
        return _days_between(node)
    if isinstance(node, _SAFE_PARSES) and node.args.get("safe"):
        return _tried_parse(node)
    if isinstance(node, exp.Select) and node.args.get("qualify"):
        return _without_qualify(node)
    if isinstance(node, exp.DateDiff) and (weeks := weeks_crossed(node, dialect)) is not node:
        return weeks
    if isinstance(node, (exp.DateDiff, exp.DatetimeDiff)) and node.args.get("date_part_boundary"):
        return _boundaries_crossed(node)  # (DatetimeDiff: BigQuery's DATETIME_DIFF, which counts them too)
    numeric = number_rewrite(node, dialect)
    if numeric is not node:
        return numeric
    zoned = _in_time_zone(node)
    if zoned is not None:
        return zoned
    if isinstance(node, (exp.Dayname, exp.Monthname)) and not node.args.get("abbreviated"):
        # DuckDB's DAYNAME / MONTHNAME are the whole names (Sunday, January); Spark's are abbreviated.
        pattern = "EEEE" if isinstance(node, exp.Dayname) else "MMMM"
        return exp.Anonymous(this="DATE_FORMAT", expressions=[node.this, exp.Literal.string(pattern)])
    if isinstance(node, exp.RegexpReplace) and node.args.get("single_replace"):
        return _regexp_replaced(node)
    return ordered_array_agg(node, dialect)


def _regexp_replaced(node: exp.RegexpReplace) -> exp.Expression:
    """DuckDB's and PostgreSQL's REGEXP_REPLACE replace the first match only, unless flagged 'g' (all), ignore case
    if flagged 'i', and write a group in the replacement as ``\\1``; Spark's replaces every match and reads ``$1``.
    Other flags, or a replacement that is not a literal, are left as sqlglot writes them."""
    flags = node.args.get("modifiers")
    letters = flags.name if isinstance(flags, exp.Literal) and flags.is_string else ("" if flags is None else None)
    replacement = node.args.get("replacement")
    if letters is None or set(letters) - set("gic") or not (replacement is None or replacement.is_string):
        return node
    pattern = node.expression
    if "i" in letters:
        pattern = exp.Literal.string("(?i)" + pattern.name) if pattern.is_string else \
            exp.Concat(expressions=[exp.Literal.string("(?i)"), pattern])
    java = exp.Literal.string(_java_replacement(replacement.name if replacement is not None else ""))
    if "g" in letters:
        return exp.RegexpReplace(this=node.this, expression=pattern, replacement=java)
    first = exp.Anonymous(this="JAVA_METHOD", expressions=[
        exp.Literal.string("org.apache.commons.lang3.RegExUtils"), exp.Literal.string("replaceFirst"),
        node.this.copy(), pattern, java])
    # JAVA_METHOD hands a NULL on as the text 'null'.
    return exp.Case(ifs=[exp.If(this=exp.Is(this=node.this.copy(), expression=exp.Null()), true=exp.Null())], default=first)


def _java_replacement(text: str) -> str:
    """A DuckDB / PostgreSQL replacement (``\\1`` a group, ``\\&`` the match, ``\\\\`` a backslash, ``$`` itself) in
    Java's syntax (``$1``, ``$0``, ``\\\\``, ``\\$``)."""
    out, index = [], 0
    while index < len(text):
        char = text[index]
        following = text[index + 1] if index + 1 < len(text) else ""
        if char == "\\" and (following.isdigit() or following == "&"):
            out.append("$" + ("0" if following == "&" else following))
            index += 2
            continue
        if char == "\\" and following == "\\":
            out.append("\\\\")
            index += 2
            continue
        out.append("\\$" if char == "$" else "\\\\" if char == "\\" else char)
        index += 1
    return "".join(out)


def _duckdb_date_text(node: exp.TryCast) -> exp.Expression:
    pattern = next(text for kind, text in _DUCKDB_DATE_TEXT.items() if node.to.is_type(kind))
    if node.this.is_string:  # a literal (a date spine's bounds): decided here
        return node if re.search(pattern, node.this.name) else exp.Cast(this=exp.Null(), to=node.to.copy())
    as_text = exp.Cast(this=node.this.copy(), to=exp.DataType.build("STRING"))
    readable = exp.RegexpLike(this=as_text, expression=exp.Literal.string(pattern))
    return exp.If(this=readable, true=node.copy(), false=exp.Null())


def _in_time_zone(node: exp.Expression) -> exp.Expression | None:
    """A date or time read in a time zone (DuckDB's ``CURRENT_DATE(zone)``, BigQuery's ``DATETIME(ts, zone)``,
    ``DATE(ts, zone)``, ``TIMESTAMP(naive, zone)``), which Spark has no such functions for: the wall clock of the
    instant in ``zone`` (the session's time zone is UTC), or the instant of a wall clock in ``zone``."""
    if isinstance(node, exp.CurrentDate) and node.this is not None:
        return exp.Cast(this=_wall_clock(node.this, exp.CurrentTimestamp()), to=exp.DataType.build("DATE"))
    if isinstance(node, exp.Datetime) and node.expression is not None:
        return _wall_clock(node.expression, node.this)
    if isinstance(node, exp.Date) and node.args.get("zone") is not None and not node.expressions:
        return exp.Cast(this=_wall_clock(node.args["zone"], node.this), to=exp.DataType.build("DATE"))
    if isinstance(node, exp.Timestamp) and node.args.get("zone") is not None:
        return exp.Anonymous(this="TO_UTC_TIMESTAMP", expressions=[node.this, node.args["zone"]])
    return None


def _wall_clock(zone: exp.Expression, moment: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this="CONVERT_TIMEZONE", expressions=[zone.copy(), moment.copy()])


def _epoch_seconds(moment: exp.Expression) -> exp.Expression:
    """Seconds since 1970 with their fraction (PostgreSQL's and DuckDB's ``EXTRACT(EPOCH ...)``, DuckDB's
    ``epoch``), of a timestamp or of a date's midnight; Spark has no EPOCH field and ``UNIX_TIMESTAMP`` drops the
    fraction."""
    inner = unmarked(moment.copy()).unnest()  # (a subtraction of columns is marked as a number of days by then)
    if isinstance(inner, exp.Sub) and not any(isinstance(side, exp.Interval) for side in inner.unnest_operands()):
        # The epoch of a duration (``EPOCH(b - a)``, PostgreSQL's ``EXTRACT(EPOCH FROM b - a)``): its seconds. Spark
        # casts no interval to a timestamp, so it is the difference of the two moments' epochs.
        return exp.Paren(this=exp.Sub(this=_epoch_seconds(inner.this), expression=_epoch_seconds(inner.expression)))
    timestamp = exp.Cast(this=moment.copy(), to=exp.DataType.build("TIMESTAMP"))
    micros = exp.Anonymous(this="UNIX_MICROS", expressions=[timestamp])
    return exp.Paren(this=exp.Div(this=micros, expression=exp.Literal.number(1000000)))


def _boundaries_crossed(node: exp.DateDiff | exp.DatetimeDiff) -> exp.Expression:
    """DuckDB's, Snowflake's and BigQuery's DATE_DIFF count the unit's boundaries crossed (a second across a minute
    is 1 minute); Spark's counts whole units elapsed (0): both sides truncated to the unit first. (Spark's
    DATE_TRUNC starts every week on Monday, where the dialects disagree: weeks are ``weeks_crossed``'s.)"""
    unit = _day_unit(node.args.get("unit") or exp.var("DAY"))
    if unit not in _BOUNDARY_UNITS:
        return node
    truncated = [exp.TimestampTrunc(this=side.copy(), unit=exp.var(unit)) for side in (node.this, node.expression)]
    return exp.DateDiff(this=truncated[0], expression=truncated[1], unit=exp.var(unit))


def _tried_parse(node: exp.Expression) -> exp.Expression:
    pattern = Spark().generator().format_time(node)
    arguments = [node.this, *([sqlglot.parse_one(pattern, read="spark")] if pattern else [])]
    parsed = exp.Anonymous(this="TRY_TO_TIMESTAMP", expressions=arguments)
    return parsed if isinstance(node, exp.StrToTime) else exp.Cast(this=parsed, to=exp.DataType.build("DATE"))


def _without_qualify(select: exp.Select) -> exp.Expression:
    """sqlglot's subquery for QUALIFY, whose window column the outer query's ``*`` must not pick."""
    outer = eliminate_qualify(select.copy())
    inner = outer.args["from_"].this.this if outer.args.get("from_") else None
    if isinstance(inner, exp.Select) and any(_is_star(projection) for projection in outer.expressions):
        window = inner.expressions[-1].alias_or_name
        outer.set("expressions", [exp.Star(except_=[exp.column(window)])])
    return outer


def _is_star(projection: exp.Expression) -> bool:
    return isinstance(projection, exp.Star) or (isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star))


def _concat_of_strings(node: exp.Concat) -> exp.Expression:
    def as_text(argument: exp.Expression) -> exp.Expression:
        if argument.is_string:
            return argument
        text = argument if isinstance(argument, exp.Cast) and argument.to.is_type(*exp.DataType.TEXT_TYPES) else \
            exp.Cast(this=argument, to=exp.DataType.build("STRING"))
        return exp.Coalesce(this=text, expressions=[exp.Literal.string("")])

    return exp.Concat(expressions=[as_text(argument) for argument in node.expressions], safe=node.args.get("safe"))


def _cast_each(node: exp.Cast) -> exp.Expression:
    generator = node.this
    array = generator.this if isinstance(generator, exp.Explode) else exp.GenerateSeries(**generator.args)
    item = exp.to_identifier("sparkmesh_item")
    cast = node.copy()  # a TRY_CAST stays one
    cast.set("this", exp.column(item.copy()))
    return exp.Explode(this=exp.Transform(this=array, expression=exp.Lambda(this=cast, expressions=[item])))


def _days_between(node: exp.Sub) -> exp.Expression:
    """A subtraction that is a number of days where both sides are DATEs: ``DATEDIFF`` where they are by their
    spelling, a marker (``typed_operands``) where they may be (columns), as written otherwise."""
    if _is_date(node.this) and _is_date(node.expression):
        return exp.Anonymous(this="DATEDIFF", expressions=[node.this, node.expression])
    if all(_is_date(side) or isinstance(side, exp.Column) for side in (node.this, node.expression)):
        return exp.Anonymous(this=DAYS_MARKER, expressions=[node.this, node.expression])
    return node


def _is_date(node: exp.Expression) -> bool:
    if isinstance(node, exp.Paren):
        return _is_date(node.this)
    return isinstance(node, exp.CurrentDate) or (isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.DATE))


def _plain_seconds(node: exp.UnixToTime) -> bool:
    scale = node.args.get("scale")
    plain = scale is None or (isinstance(scale, exp.Literal) and scale.name == "0")
    return plain and not any(node.args.get(key) for key in ("zone", "hours", "minutes", "format", "target_type"))


def _from_sunday_zero(day: exp.Expression) -> exp.Expression:
    return exp.Paren(this=exp.Sub(this=exp.Anonymous(this="DAYOFWEEK", expressions=[day]), expression=exp.Literal.number(1)))


def _iso_day(day: exp.Expression) -> exp.Expression:
    return exp.Extract(this=exp.var("DAYOFWEEK_ISO"), expression=day)


def _day_unit(unit: exp.Expression) -> str:
    return unit.name.upper() if isinstance(unit, (exp.Var, exp.Literal, exp.Column, exp.Identifier)) else ""


def _extracted_day(node: exp.Extract, dialect: str) -> exp.Expression:
    unit = _day_unit(node.this)
    if unit in _ISO_UNITS or (unit in _DAY_OF_WEEK_UNITS and dialect in _ISO_DOW_DIALECTS):
        return _iso_day(node.expression)
    if unit in _DAY_OF_WEEK_UNITS and dialect in _SUNDAY_ZERO_DIALECTS:
        return _from_sunday_zero(node.expression)
    return node


def _anonymous(node: exp.Anonymous, dialect: str) -> exp.Expression:
    name, arguments = node.name.upper(), node.expressions
    if name in ("DATE_PART", "DATEPART") and len(arguments) == 2 and _day_unit(arguments[0]) in _DAY_UNITS:
        return _extracted_day(exp.Extract(this=exp.var(_day_unit(arguments[0])), expression=arguments[1]), dialect)
    if name == "TRY_STRPTIME" and dialect == "duckdb" and len(arguments) == 2 and arguments[1].is_string:
        parsed = sqlglot.parse_one(f"STRPTIME(x, {arguments[1].sql(dialect='duckdb')})", read="duckdb")
        parsed.set("this", arguments[0])
        return _tried_parse(parsed)
    if name == "WEEKDAY" and dialect == "duckdb" and len(arguments) == 1:  # Sunday = 0 there, Monday = 0 in Spark
        return _from_sunday_zero(arguments[0])
    if name == "ISFINITE" and dialect == "duckdb" and len(arguments) == 1:  # NULL stays NULL, as in DuckDB
        return exp.Not(this=exp.Paren(this=exp.Or(
            this=exp.Anonymous(this="ISNAN", expressions=[arguments[0]]), expression=_infinite(arguments[0]))))
    return _as_the_dialect_reads(node, dialect)


def _infinite(number: exp.Expression) -> exp.Expression:
    """Spark has no IS_INF: the magnitude is infinity."""
    infinity = exp.Cast(this=exp.Literal.string("Infinity"), to=exp.DataType.build("DOUBLE"))
    return exp.EQ(this=exp.Abs(this=number.copy()), expression=infinity)


def _as_the_dialect_reads(node: exp.Anonymous, dialect: str) -> exp.Expression:
    """A function left unknown (a macro's ``exp.func`` without a dialect, or a user function) as the model's dialect
    parses it; unchanged when that dialect does not know it either (or it is a macro's call, kept for its render)."""
    if node.name.upper() not in Dialect.get_or_raise(dialect).parser_class.FUNCTIONS:
        return node
    try:
        parsed = sqlglot.parse_one(node.sql(dialect=dialect), read=dialect)
    except sqlglot.errors.SqlglotError:
        return node
    return node if isinstance(parsed, exp.Anonymous) else parsed
