"""Refuse, at load time, SQL of another dialect that open-source Spark cannot run once transpiled.

sqlglot transpiles a model written for BigQuery, DuckDB, Snowflake ... to Spark SQL, but some constructs have no
Spark equivalent. sqlglot reports a few of them itself (its generator's ``unsupported_level``); others it writes
out as they are, and Spark then refuses them at run time, or worse reads them differently (``t ASOF JOIN u`` is
table ``t`` aliased ``ASOF``). Both are caught here, so a model that cannot run never loads. Models written in
Spark SQL are left alone: their text is what Spark reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp
from sqlglot.errors import ErrorLevel, UnsupportedError

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.sql.dialect_functions import with_dialect_functions
from dagster_sparkmesh.project.sql.file_readers import UnsupportedRead, needs_translation, spark_reads
from dagster_sparkmesh.project.sql.lateral_aliases import with_window_aliases_written_out
from dagster_sparkmesh.project.sql.refused_functions import refusal_of
from dagster_sparkmesh.project.sql.typed_operands import unmarked

SPARK_DIALECTS = frozenset({"spark", "spark2", "hive"})
# Type names open-source Spark's parser accepts (``DataType`` keywords of Spark 4).
_SPARK_TYPES = frozenset(
    """BOOLEAN TINYINT BYTE SMALLINT SHORT INT INTEGER BIGINT LONG FLOAT REAL DOUBLE DECIMAL DEC NUMERIC STRING
    VARCHAR CHAR CHARACTER BINARY DATE TIMESTAMP TIMESTAMP_NTZ TIMESTAMP_LTZ TIME INTERVAL ARRAY MAP STRUCT VARIANT
    VOID""".split()
)
_TYPE_NAME = re.compile(r"[A-Z_0-9]+")


@dataclass(frozen=True)
class _Rule:
    """A construct Spark cannot run: how to spot its node, what to call it, what to write instead."""

    matches: Callable[[exp.Expression], bool]
    construct: str
    hint: str


def _spark_type_name(node: exp.Expression) -> str | None:
    """The Spark spelling of a type node's name when Spark does not know it, else None."""
    if not isinstance(node, exp.DataType):
        return None
    found = _TYPE_NAME.match(node.sql(dialect="spark").upper())
    name = found.group() if found else node.sql(dialect="spark")
    return None if name in _SPARK_TYPES else name


_RULES = (
    _Rule(
        lambda node: isinstance(node, exp.Star) and bool(node.args.get("replace") or node.args.get("rename")),
        "SELECT * REPLACE / * RENAME",
        "list the columns: SELECT a + 1 AS a, b, ... (Spark has * EXCEPT, but no * REPLACE or * RENAME)",
    ),
    _Rule(
        lambda node: isinstance(node, exp.Join) and str(node.args.get("method") or "").upper() in {"ASOF", "POSITIONAL"},
        "an ASOF / POSITIONAL join",
        "Spark has neither (it would read ASOF as a table alias): join on a range and keep the nearest row with "
        "ROW_NUMBER() OVER (...), or join on a row number",
    ),
    _Rule(
        lambda node: isinstance(node, exp.Array) and any(isinstance(item, exp.Query) for item in node.expressions),
        "ARRAY(subquery)",
        "aggregate in a subquery instead: (SELECT collect_list(x) FROM ...)",
    ),
    _Rule(
        lambda node: isinstance(node, exp.MatchRecognize),
        "MATCH_RECOGNIZE",
        "express the pattern with window functions (LAG / LEAD) or in a Python model",
    ),
    _Rule(
        lambda node: _spark_type_name(node) is not None,
        "a type Spark does not have",
        "cast to a Spark type: STRING (for JSON text), BIGINT, DECIMAL(38, 0), BINARY, TIMESTAMP ...",
    ),
)


def check_runs_on_spark(statement: exp.Expression, *, dialect: str, path: Path, body: str) -> None:
    """Raise a ProjectError (file, line, construct, what to write) when ``statement``, parsed from ``dialect``,
    cannot run on open-source Spark."""
    if dialect.lower() in SPARK_DIALECTS:
        return
    for node in statement.walk():
        if needs_translation(node):  # left by ``with_spark_equivalents``: say why
            try:
                spark_reads(node)
                reason = f"{node.sql(dialect=dialect)} outside FROM"
            except UnsupportedRead as error:
                reason = str(error)
            raise _refusal(node, statement, body, path, dialect, f"{reason}: it cannot run on Spark", _READER_HINT)
        if (refusal := refusal_of(node)) is not None:  # a function marked by ``dialect_functions``
            raise _refusal(node, statement, body, path, dialect, *refusal)
        for rule in _RULES:
            if rule.matches(node):
                what = rule.construct
                if rule.construct.startswith("a type"):
                    what += f" ({_spark_type_name(node)})"
                raise _refusal(node, statement, body, path, dialect, f"{what} cannot run on Spark", rule.hint)
    try:
        statement.sql(dialect="spark", unsupported_level=ErrorLevel.RAISE)
    except UnsupportedError as error:
        message = str(error).splitlines()[0]
        raise _refusal(statement, statement, body, path, dialect, f"sqlglot cannot write this in Spark SQL: {message}",
                       "rewrite the statement without it (or in Spark SQL, with dialect spark)") from None


_READER_HINT = (
    "read_csv / read_csv_auto are read by Spark with header = true (required), delim/sep, quote, escape, nullstr, "
    "all_varchar; read_parquet with union_by_name; for anything else read the file in a Python model "
    "(context.spark.read.options(...).csv(path))"
)


def _refusal(
    node: exp.Expression, statement: exp.Expression, body: str, path: Path, dialect: str, message: str, hint: str
) -> ProjectError:
    line = _line_of(node)
    lines = body.splitlines()
    snippet = lines[line - 1] if line and 0 < line <= len(lines) else node.sql(dialect=dialect)
    return ProjectError(f"{message} (the model is written in {dialect})", path=path, line=line, snippet=snippet, hint=hint)


def _line_of(node: exp.Expression | None) -> int | None:
    """The line sqlglot recorded for the node's first token that has one (most nodes carry none, e.g. types),
    else for its parent's."""
    while node is not None:
        for child in node.walk():
            if child.meta.get("line"):
                return child.meta["line"]
        node = node.parent
    return None


def with_spark_equivalents(statement: exp.Expression, *, dialect: str, typed_later: bool = False) -> exp.Expression:
    """Constructs of another dialect that Spark runs once rewritten, where sqlglot's own transpiling loses them:
    DuckDB's ``READ_PARQUET([paths])`` (sqlglot writes a list as an empty path) reads each path as
    ``parquet.`path```, several unioned by position, as DuckDB reads a list; and the functions of
    ``dialect_functions`` (epochs with fractions, days of the week, DuckDB's ``TRY_STRPTIME``); and an alias of the
    SELECT list referenced in a window of the same list, written out (``lateral_aliases``: Spark refuses it).
    ``typed_later``: the statement is a model's query, whose operations that depend on its columns' types stay marked
    for the loader (``typed_operands``); any other statement gets them as Spark writes them."""
    if dialect.lower() in SPARK_DIALECTS:
        return statement
    for table in list(statement.find_all(exp.Table)):
        reader = table.this
        if isinstance(reader, exp.ReadParquet) and len(reader.expressions) == 1 and isinstance(reader.expressions[0], exp.Array):
            _read_each_path(table, [exp.ReadParquet(expressions=[path.copy()]) for path in reader.expressions[0].expressions])
        elif needs_translation(reader):
            try:
                _read_each_path(table, spark_reads(reader))  # file reads with options (``file_readers``)
            except UnsupportedRead:
                pass  # refused, with its reason, by ``check_runs_on_spark``
    written = with_window_aliases_written_out(with_dialect_functions(statement, dialect), dialect)
    return written if typed_later else unmarked(written)


def _read_each_path(table: exp.Table, calls: list[exp.Expression]) -> None:
    readers = [exp.Table(this=call) for call in calls]
    if len(readers) == 1:
        table.set("this", readers[0].this)
        return
    union = exp.union(*(exp.select("*").from_(reader) for reader in readers), distinct=False)
    alias = table.args.get("alias")
    table.replace(exp.Subquery(this=union, alias=alias.copy() if alias else None))
