"""Everyday text and date functions of PostgreSQL, Snowflake and BigQuery that sqlglot writes in Spark SQL that
Spark refuses, or that sqlglot refuses to write, written here so that Spark returns what the dialect returns (or
refused at load, with what to write instead, where Spark cannot):

- a date or time as text with a template (PostgreSQL's ``to_char``, Snowflake's ``TO_CHAR``): ``date_formats.py``;
- Snowflake's ``SPLIT_PART(s, sep, 0)``, the first part there (documented: "0 is treated as 1"), an error in Spark;
- PostgreSQL's ``string_to_array(s, sep [, null_text])``, which Spark does not have: Spark's ``SPLIT`` on the
  separator read literally (Spark's is a regular expression), and PostgreSQL's edge cases (checked on PostgreSQL
  15): an empty text is an empty array, an empty separator keeps the text whole, a NULL separator splits into
  characters, parts equal to ``null_text`` are NULL;
- BigQuery's ``DATE_TRUNC(d, WEEK)`` (weeks start on Sunday), ``WEEK(<day>)`` and ``ISOWEEK`` (Monday), and
  ``TIMESTAMP_TRUNC`` / ``DATETIME_TRUNC`` in those units (documented), where Spark's weeks all start on Monday: the
  last start of the week on or before the date (``week_boundaries.start_of_week``); ``DATETIME_DIFF`` in those
  units counts the week starts crossed, as ``DATE_DIFF`` does (``week_boundaries.weeks_crossed``);
- ``EXTRACT(DAYOFYEAR FROM d)`` (BigQuery, Snowflake, MySQL), which Spark spells ``DOY``; BigQuery's
  ``EXTRACT(WEEK FROM d)`` (weeks from Sunday, the days before the year's first Sunday in week 0; documented), which
  Spark read as the ISO week, ``WEEK(<day>)`` likewise, and ``ISOWEEK`` / ``ISOYEAR``, which Spark refused;
- BigQuery's ``UNIX_SECONDS`` / ``UNIX_MILLIS`` / ``UNIX_MICROS``, which Spark refuses for a timestamp without time
  zone (a seed's, a cast's): the value is cast to TIMESTAMP first, read in the session's time zone, UTC, which is
  BigQuery's (documented: since 1970-01-01 00:00:00 UTC, rounded down);
- PostgreSQL's ``j::json ->> 'a'`` (and ``::jsonb``, ``->``): Spark has no JSON type, and its ``GET_JSON_OBJECT``
  reads JSON text, so a cast of text to JSON that only feeds an extraction keeps the text (checked on PostgreSQL
  15: the values of ``->>``). Spark writes again what it extracts where PostgreSQL keeps the text: a number's
  trailing zeros go (1.50 is '1.5'), an object is compact ('{"c":5}', ``jsonb`` writes '{"c": 5}'). ``->``, whose
  JSON keeps a string's quotes, is kept only as the input of ``->>`` / ``->`` or cast to a number, else refused;
  ``#>> '{a,b}'`` with keys (no array index) is GET_JSON_OBJECT's ``'$.a.b'``;
- ``initcap``, which capitalizes every word in PostgreSQL (after any character that is no letter or digit, checked
  on PostgreSQL 15: 'o''neil x-12-y' is 'O''Neil X-12-Y') and BigQuery (after its documented delimiters: white
  space and ``[](){}/|<>!?@"^#$&~_,.:;*%+-``), and after spaces only in Spark: a space is put after each
  delimiter, Spark's INITCAP applied, and the spaces taken out again (Spark title-cases a few letters PostgreSQL
  upper-cases or keeps: 'ßa' is 'Ssa', 'ǆ' is 'ǅ'); BigQuery's delimiters without the space are refused, Spark
  always starts a word after one;
- PostgreSQL's ``age(a, b)``, an interval of years, months and days that Spark has no type for: refused.
"""

from __future__ import annotations

import re
from functools import cache

import sqlglot
from sqlglot import exp

from dagster_sparkmesh.project.sql.date_formats import postgres_to_char, snowflake_to_char
from dagster_sparkmesh.project.sql.refused_functions import refused
from dagster_sparkmesh.project.sql.week_boundaries import SPARK_DAY, start_of_week, weeks_crossed

_POSTGRES_DELIMITERS = r"[^\p{L}\p{N}]"
_BIGQUERY_DELIMITERS = r"""[\s\[\](){}/|<>!?@"^#$&~_,.:;*%+\-]"""
_EPOCH_UNITS = (exp.UnixSeconds, exp.UnixMillis, exp.UnixMicros)
_TRUNCATIONS = (exp.DateTrunc, exp.TimestampTrunc, exp.DatetimeTrunc)
_AGE_HINT = (
    "compute the part you need instead: days as a date minus a date; whole months as "
    "(EXTRACT(YEAR FROM a) - EXTRACT(YEAR FROM b)) * 12 + EXTRACT(MONTH FROM a) - EXTRACT(MONTH FROM b), "
    "less one when a's day of the month (and time) comes before b's; whole years as those months / 12"
)
_JSON_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A key GET_JSON_OBJECT's path names as it is (``$.key``)."""
_ZONED_TIMESTAMPS = (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ)
"""The types sqlglot writes as Spark's TIMESTAMP (an instant), which UNIX_SECONDS takes."""


def text_and_date_rewrite(node: exp.Expression, dialect: str) -> exp.Expression:
    """``node`` (parsed from ``dialect``) as Spark SQL that returns what the dialect returns, or ``node``."""
    if isinstance(node, exp.Extract) and _unit_name(node.this) == "DAYOFYEAR":
        return exp.Extract(this=exp.var("DOY"), expression=node.expression)
    if isinstance(node, _EPOCH_UNITS) and not _is_timestamp_cast(node.this):
        return type(node)(this=exp.Cast(this=node.this, to=exp.DataType.build("TIMESTAMP")))
    rewrite = _BY_DIALECT.get(dialect)
    return rewrite(node) if rewrite else node


def _postgres(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.TimeToStr):
        return postgres_to_char(node)
    if isinstance(node, exp.StringToArray):
        return _string_to_array(node)
    if isinstance(node, (exp.JSONExtract, exp.JSONExtractScalar)) and _is_json_cast(node.this.unnest()):
        return _extracted_from_text(node)
    if isinstance(node, exp.JSONBExtractScalar) and _is_json_cast(node.this.unnest()):
        return _extracted_by_keys(node)
    if isinstance(node, exp.Initcap):
        return _capitalized(node.this, _POSTGRES_DELIMITERS)
    if isinstance(node, exp.Anonymous) and node.name.upper() == "AGE":
        return refused(node, "PostgreSQL's age() is an interval of years, months and days, which Spark has no type for",
                       _AGE_HINT)
    return node


def _snowflake(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.ToChar) and node.args.get("format") is not None:
        return snowflake_to_char(node)
    if isinstance(node, exp.SplitPart) and node.args.get("part_index_zero_as_one"):
        return _part_zero_as_one(node)
    return node


def _bigquery(node: exp.Expression) -> exp.Expression:
    if isinstance(node, _TRUNCATIONS) and (first_day := _week_start(node.args.get("unit"))) is not None:
        return _truncated_to_week(node, first_day)
    if isinstance(node, exp.Extract):
        return _bigquery_week_number(node)
    if isinstance(node, exp.DatetimeDiff) and node.args.get("date_part_boundary"):
        # In weeks: the week starts crossed, as DATE_DIFF counts (Spark refused ISOWEEK, sqlglot WEEK).
        as_dates = exp.DateDiff(**node.args)
        weeks = weeks_crossed(as_dates, "bigquery")
        return node if weeks is as_dates else weeks
    if isinstance(node, exp.Initcap):
        return _bigquery_initcap(node)
    return node


_BY_DIALECT = {"postgres": _postgres, "snowflake": _snowflake, "bigquery": _bigquery}


def _unit_name(unit: exp.Expression | None) -> str:
    return unit.name.upper() if isinstance(unit, (exp.Var, exp.Literal, exp.Column, exp.Identifier)) else ""


def _is_timestamp_cast(node: exp.Expression) -> bool:
    return isinstance(node, exp.Cast) and node.to.is_type(*_ZONED_TIMESTAMPS)


def _is_json_cast(node: exp.Expression) -> bool:
    return isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.JSON, exp.DataType.Type.JSONB)


def _extracted_from_text(node: exp.JSONExtract | exp.JSONExtractScalar) -> exp.Expression:
    """An extraction from text cast to JSON, from the text itself. PostgreSQL's ``->`` returns JSON, whose text
    differs from what Spark's GET_JSON_OBJECT returns (a string keeps its quotes: '"x"'), so it is kept only where
    that cannot show: as the input of another extraction, or cast to a number or a boolean."""
    last = _last_extraction(node)  # of a chain (j::jsonb -> 'b' -> 'c'), whose value is the one seen
    if isinstance(last, exp.JSONExtract) and not _cast_to_a_number(last):
        return refused(node, "PostgreSQL's -> returns JSON (a string in its double quotes), which Spark has no type "
                             "for", "use ->> for the value as text (or cast the result of -> to a number)")
    return node.__class__(**{**node.args, "this": node.this.unnest().this})


def _extracted_by_keys(node: exp.JSONBExtractScalar) -> exp.Expression:
    """PostgreSQL's ``j::jsonb #>> '{a,b}'`` (the value at a path of keys, as text) from the text itself. A path
    with a number is left as sqlglot writes it (refused at load): PostgreSQL reads it as an array's index or an
    object's key depending on the value, which GET_JSON_OBJECT's path cannot say."""
    path = node.expression
    keys = path.name[1:-1].split(",") if path.is_string and path.name.startswith("{") and path.name.endswith("}") \
        else []
    if not keys or not all(_JSON_KEY.fullmatch(key) for key in keys):
        return node
    json_path = exp.Literal.string("$" + "".join(f".{key}" for key in keys))
    return exp.Anonymous(this="GET_JSON_OBJECT", expressions=[node.this.unnest().this, json_path])


def _last_extraction(node: exp.Expression) -> exp.Expression:
    """The extraction of which ``node`` is the input (through parentheses), and so on up the chain."""
    while True:
        outer = node.parent
        while isinstance(outer, exp.Paren):
            outer = outer.parent
        if not (isinstance(outer, (exp.JSONExtract, exp.JSONExtractScalar)) and outer.this.unnest() is node):
            return node
        node = outer


def _cast_to_a_number(node: exp.Expression) -> bool:
    parent = node.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    return isinstance(parent, exp.Cast) and not parent.to.is_type(
        *exp.DataType.TEXT_TYPES, exp.DataType.Type.JSON, exp.DataType.Type.JSONB)


def _part_zero_as_one(node: exp.SplitPart) -> exp.Expression:
    part = node.args["part_index"]
    if part.is_int:
        first = exp.Literal.number(1) if int(part.name) == 0 else part
    else:
        first = exp.Case(ifs=[exp.If(this=exp.EQ(this=part.copy(), expression=exp.Literal.number(0)),
                                     true=exp.Literal.number(1))], default=part.copy())
    return exp.SplitPart(this=node.this, delimiter=node.args["delimiter"], part_index=first)


def _string_to_array(node: exp.StringToArray) -> exp.Expression:
    text, separator, null_text = node.this, node.expression, node.args.get("null")
    parts = _split_literally(text, separator)
    if null_text is not None and not isinstance(null_text, exp.Null):
        item = exp.to_identifier("sparkmesh_part")
        as_null = exp.If(this=exp.EQ(this=exp.column(item.copy()), expression=null_text.copy()), true=exp.Null(),
                         false=exp.column(item.copy()))
        parts = exp.Transform(this=parts, expression=exp.Lambda(this=as_null, expressions=[item]))
    empty = exp.Cast(this=exp.Array(expressions=[]), to=exp.DataType.build("ARRAY<STRING>"))
    return exp.If(this=exp.EQ(this=text.copy(), expression=exp.Literal.string("")), true=empty, false=parts)


def _split_literally(text: exp.Expression, separator: exp.Expression) -> exp.Expression:
    """PostgreSQL's parts of a non-empty text: by characters for a NULL separator, whole for an empty one."""
    def split(pattern: exp.Expression) -> exp.Expression:
        return exp.RegexpSplit(this=text.copy(), expression=pattern, limit=exp.Literal.number(-1))

    if isinstance(separator, exp.Null):
        return split(exp.Literal.string(""))
    if separator.is_string:
        if not separator.name:
            return exp.Array(expressions=[text.copy()])
        return split(exp.Literal.string("".join(char if char.isalnum() else "\\" + char for char in separator.name)))
    quoted = exp.Concat(expressions=[exp.Literal.string("\\Q"), separator.copy(), exp.Literal.string("\\E")])
    return exp.Case(ifs=[
        exp.If(this=exp.Is(this=separator.copy(), expression=exp.Null()), true=split(exp.Literal.string(""))),
        exp.If(this=exp.EQ(this=separator.copy(), expression=exp.Literal.string("")),
               true=exp.Array(expressions=[text.copy()])),
    ], default=split(quoted))


def _week_start(unit: exp.Expression | None) -> str | None:
    """The day BigQuery's week unit starts on (documented: WEEK on Sunday, ISOWEEK on Monday), else None."""
    if isinstance(unit, exp.WeekStart):
        return unit.name.upper()
    return {"WEEK": "SUNDAY", "ISOWEEK": "MONDAY"}.get(_unit_name(unit))


def _bigquery_week_number(node: exp.Extract) -> exp.Expression:
    """BigQuery's EXTRACT of a week: ``ISOWEEK`` and ``ISOYEAR`` are Spark's ``WEEK`` and ``YEAROFWEEK``; ``WEEK`` and
    ``WEEK(<day>)`` count the weeks starting on that day (Sunday for WEEK), the days before the first one in week 0
    (documented), where Spark's WEEK is ISO's: the days of the year up to the week's start, in sevens."""
    unit = node.this
    iso = {"ISOWEEK": "WEEK", "ISOYEAR": "YEAROFWEEK"}.get(_unit_name(unit))
    if iso is not None:
        return exp.Extract(this=exp.var(iso), expression=node.expression)
    first_day = unit.name.upper() if isinstance(unit, exp.WeekStart) else {"WEEK": "SUNDAY"}.get(_unit_name(unit))
    if first_day not in SPARK_DAY:
        return node
    moment = node.expression
    since_start = exp.Mod(this=exp.Paren(this=exp.Add(
        this=exp.Anonymous(this="DAYOFWEEK", expressions=[moment.copy()]),
        expression=exp.Literal.number(7 - SPARK_DAY[first_day]))), expression=exp.Literal.number(7))
    day_of_year = exp.Anonymous(this="DAYOFYEAR", expressions=[moment.copy()])
    days = exp.Add(this=exp.Sub(this=day_of_year, expression=since_start), expression=exp.Literal.number(6))
    return exp.Paren(this=exp.IntDiv(this=exp.Paren(this=days), expression=exp.Literal.number(7)))


def _truncated_to_week(node: exp.Expression, first_day: str) -> exp.Expression:
    start = start_of_week(node.this, first_day)
    if isinstance(node, exp.DateTrunc):
        return start
    # TIMESTAMP_TRUNC: midnight in UTC, the session's time zone; DATETIME_TRUNC: midnight, as a DATETIME.
    kind = "DATETIME" if isinstance(node, exp.DatetimeTrunc) else "TIMESTAMP"
    return exp.Cast(this=start, to=exp.DataType.build(kind, dialect="bigquery"))


def _bigquery_initcap(node: exp.Initcap) -> exp.Expression:
    delimiters = node.expression
    if delimiters is None or delimiters == _bigquery_default_delimiters():
        return _capitalized(node.this, _BIGQUERY_DELIMITERS)
    if not delimiters.is_string:
        return refused(node, "BigQuery's INITCAP with delimiters that are not a literal cannot be written in Spark",
                       "give the delimiters as a literal text")
    if delimiters.name and " " not in delimiters.name:
        return refused(node, "BigQuery's INITCAP with delimiters that leave out the space cannot be written in Spark "
                             "(Spark's INITCAP starts a word after every space)",
                       "add the space to the delimiters, or capitalize with UPPER / LOWER of SUBSTR")
    if not delimiters.name:  # one word: its first character in upper case, the others in lower case
        first = exp.Substring(this=node.this.copy(), start=exp.Literal.number(1), length=exp.Literal.number(1))
        rest = exp.Substring(this=node.this.copy(), start=exp.Literal.number(2))
        return exp.Concat(expressions=[exp.Upper(this=first), exp.Lower(this=rest)])
    return _capitalized(node.this, "[" + "".join("\\" + char if not char.isalnum() else char
                                                 for char in delimiters.name) + "]")


@cache
def _bigquery_default_delimiters() -> exp.Expression:
    """The delimiters sqlglot gives an INITCAP written without them: BigQuery's default ones."""
    return sqlglot.parse_one("INITCAP(x)", read="bigquery").expression


def _capitalized(text: exp.Expression, delimiter_class: str) -> exp.Expression:
    """Each word's first letter in upper case, the others in lower case, words separated by the delimiters: Spark's
    INITCAP capitalizes after spaces only, so a space goes after each delimiter and comes out afterwards (the
    first space after a delimiter is always the one put there)."""
    spaced = exp.RegexpReplace(this=text, expression=exp.Literal.string(f"({delimiter_class})"),
                               replacement=exp.Literal.string("$1 "))
    titled = exp.Initcap(this=spaced)
    return exp.RegexpReplace(this=titled, expression=exp.Literal.string(f"({delimiter_class}) "),
                             replacement=exp.Literal.string("$1"))
