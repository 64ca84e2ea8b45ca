"""SQLMesh's ``when_matched`` and ``merge_filter`` of INCREMENTAL_BY_UNIQUE_KEY: what a row whose key the table
holds becomes, and which key matches count. Both name the new rows ``source`` and the table's ``target``.

Read once when the model loads (checked, kept as Spark SQL text, part of the model's data). A lakehouse table's
``MERGE INTO`` takes the clauses as written; a plain table, which has no MERGE in Spark, gets the same rows from one
query (``engine.merge_sql``), which reads the clauses as ``MatchedClause`` records."""

from __future__ import annotations

from collections.abc import Callable

import sqlglot
from sqlglot import exp

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


def check_when_matched(whens: exp.Whens, error: Error) -> None:
    """WHEN MATCHED clauses that UPDATE SET target columns or DELETE, reading source and target only; a clause
    without a condition only last (Spark's MERGE refuses any after it, and none could apply)."""
    clauses = whens.expressions
    for number, when in enumerate(clauses):
        _check_clause(when, error)
        if when.args.get("condition") is None and number < len(clauses) - 1:
            raise error("only the last WHEN MATCHED clause may omit its condition (the ones after it never apply)",
                        "give the earlier clause a condition: WHEN MATCHED AND <condition> THEN ...")


def check_condition(node: exp.Expression, error: Error, where: str) -> None:
    """Each column ``source.`` or ``target.`` (a struct's field too); lambda variables and subqueries' own
    columns aside."""
    variables = {p.name.lower() for lam in node.find_all(exp.Lambda) for p in lam.expressions}
    for column in node.find_all(exp.Column):
        if column.find_ancestor(exp.Select) is not None:
            continue
        root = column.parts[0].name.lower() if len(column.parts) > 1 else ""
        if root in (SOURCE, TARGET) or (not root and column.name.lower() in variables):
            continue
        raise error(f"{where} reads {column.sql('spark')}, which names neither source nor target", ALIAS_HINT)


def with_standard_aliases(node: exp.Expression) -> exp.Expression:
    """SQLMesh's other spellings of the two relations (``__MERGE_SOURCE__``, dbt's ``DBT_INTERNAL_SOURCE``...) and
    any case of ``source`` / ``target``, as ``source`` / ``target``."""
    def standard(item: exp.Expression) -> exp.Expression:
        if isinstance(item, exp.Column) and len(item.parts) > 1:
            root = item.parts[0]
            alias = _ALIASES.get(root.name.lower())
            if alias is not None:
                root.set("this", alias)
                root.set("quoted", False)
        return item

    return node.transform(standard)


_ALIASES = {
    SOURCE: SOURCE, TARGET: TARGET, "__merge_source__": SOURCE, "__merge_target__": TARGET,
    "dbt_internal_source": SOURCE, "dbt_internal_dest": TARGET,
}


def _check_clause(when: exp.When, error: Error) -> None:
    if not when.args.get("matched") or when.args.get("source"):
        raise error("when_matched takes WHEN MATCHED clauses only (new keys are always inserted)",
                    "remove the WHEN NOT MATCHED clause")
    then = when.args.get("then")
    is_delete = isinstance(then, exp.Var) and then.name.upper() == "DELETE"
    if not isinstance(then, exp.Update) and not is_delete:
        raise error("a WHEN MATCHED clause must UPDATE SET or DELETE", ALIAS_HINT)
    if when.args.get("condition") is not None:
        check_condition(when.args["condition"], error, "when_matched")
    for item in then.expressions if isinstance(then, exp.Update) else ():
        if isinstance(item, exp.Star):
            continue
        column = item.this
        if not isinstance(column, exp.Column) or column.table.lower() not in ("", TARGET) or column.args.get("db"):
            raise error(f"when_matched sets {item.this.sql('spark')}, not a column of target", ALIAS_HINT)
        check_condition(item.expression, error, "when_matched")
