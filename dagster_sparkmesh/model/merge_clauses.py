"""SQLMesh's ``when_matched`` and ``merge_filter`` of INCREMENTAL_BY_UNIQUE_KEY: what a row whose key the table
holds becomes, and which key matches count. Both name the new rows ``source`` and the table's ``target``.

Read once when the model loads (checked, kept as Spark SQL text, part of the model's data). A lakehouse table's
``MERGE INTO`` takes the clauses as written; a plain table, which has no MERGE in Spark, gets the same rows from one
query (``engine.merge_sql``), which reads the clauses as ``MatchedClause`` records."""

from __future__ import annotations

from collections.abc import Callable

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from dagster_sparkmesh.records import Record

SOURCE, TARGET = "source", "target"
ALIAS_HINT = "name the new rows source and the table's rows target: WHEN MATCHED THEN UPDATE SET target.v = source.v"
Error = Callable[[str, str], Exception]


class MergeRules(Record):
    """What a write merges by: the model's ``when_matched`` and its ``merge_filter`` rendered for the write (None:
    a matched key takes the new row, every key match counts)."""

    when_matched: str | None = None
    merge_filter: str | None = None

    @property
    def plain(self) -> bool:
        return self.when_matched is None and self.merge_filter is None


class MatchedClause(Record):
    """One ``WHEN MATCHED [AND condition] THEN ...``: ``updates`` (column, Spark SQL) for UPDATE SET, all columns
    from ``source`` for ``UPDATE SET *``, None for DELETE."""

    condition: str | None = None
    updates: tuple[tuple[str, str], ...] | None = ()
    update_all: bool = False


def read_when_matched(text: str, error: Error) -> str:
    """The clauses as written (parentheses around them allowed, as SQLMesh writes them), checked; Spark SQL."""
    body = text.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]
    try:
        whens = sqlglot.parse_one(body, into=exp.Whens, read="spark")
    except (ParseError, ValueError) as problem:
        raise error(f"when_matched is not WHEN MATCHED clauses ({str(problem).splitlines()[0]})",
                    "write when_matched (WHEN MATCHED THEN UPDATE SET target.v = source.v)") from None
    for when in whens.expressions:
        _check_clause(when, error)
    return _aliases_lowered(whens).sql("spark")


def read_merge_filter(text: str, error: Error, parse: Callable[[str], exp.Expression]) -> str:
    """A condition on ``source`` and ``target`` columns, as written: it may call macros (``target.ds > @start_ds``),
    rendered for each write like the query. ``parse``: the macro-aware parser, macro variables as NULL."""
    try:
        condition = parse(text.strip())
    except (ParseError, ValueError) as problem:
        raise error(f"merge_filter is not a condition ({str(problem).splitlines()[0]})",
                    "write merge_filter target.ds > @start_ds") from None
    _check_columns(condition, error, "merge_filter")
    return text.strip()


def clauses_of(when_matched: str) -> tuple[MatchedClause, ...]:
    whens = sqlglot.parse_one(when_matched, into=exp.Whens, read="spark")
    return tuple(_clause(when) for when in whens.expressions)


def _clause(when: exp.When) -> MatchedClause:
    condition = when.args.get("condition")
    condition_sql = condition.sql("spark") if condition is not None else None
    then = when.args["then"]
    if not isinstance(then, exp.Update):
        return MatchedClause(condition=condition_sql, updates=None)
    if any(isinstance(item, exp.Star) for item in then.expressions):
        return MatchedClause(condition=condition_sql, update_all=True)
    updates = tuple((item.this.name.lower(), item.expression.sql("spark")) for item in then.expressions)
    return MatchedClause(condition=condition_sql, updates=updates)


def _check_clause(when: exp.When, error: Error) -> None:
    if not when.args.get("matched") or when.args.get("source"):
        raise error("when_matched takes WHEN MATCHED clauses only (new keys are always inserted)",
                    "remove the WHEN NOT MATCHED clause")
    then = when.args.get("then")
    is_delete = isinstance(then, exp.Var) and then.name.upper() == "DELETE"
    if not isinstance(then, exp.Update) and not is_delete:
        raise error("a WHEN MATCHED clause must UPDATE SET or DELETE", ALIAS_HINT)
    if when.args.get("condition") is not None:
        _check_columns(when.args["condition"], error, "when_matched")
    for item in then.expressions if isinstance(then, exp.Update) else ():
        if isinstance(item, exp.Star):
            continue
        column = item.this
        if not isinstance(column, exp.Column) or column.table.lower() not in ("", TARGET):
            raise error(f"when_matched sets {item.this.sql('spark')}, not a column of target", ALIAS_HINT)
        _check_columns(item.expression, error, "when_matched")


def _check_columns(node: exp.Expression, error: Error, where: str) -> None:
    for column in node.find_all(exp.Column):
        if column.table.lower() not in (SOURCE, TARGET):
            raise error(f"{where} reads {column.sql('spark')}, which names neither source nor target", ALIAS_HINT)


def _aliases_lowered(node: exp.Expression) -> exp.Expression:
    def lower(item: exp.Expression) -> exp.Expression:
        if isinstance(item, exp.Column) and item.table.lower() in (SOURCE, TARGET):
            item.set("table", exp.to_identifier(item.table.lower()))
        return item

    return node.copy().transform(lower)
