"""Rule ``time_filter``: an INCREMENTAL_BY_TIME_RANGE query should read only its interval.

Without a predicate on ``@start_*``/``@end_*`` every interval re-reads (and re-aggregates) the whole upstream;
the overwrite keeps only the interval's rows, so the result looks right while each run costs a full scan.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from dagster_sparkmesh.lint.rule import LintTarget, LintViolation, Rule

NAME = "time_filter"
_INTERVAL_MACROS = tuple(f"{edge}_" for edge in ("start", "end"))


def check(target: LintTarget) -> Iterator[LintViolation]:
    if not target.model.kind.has_time_column or target.query is None:
        return
    if any(_mentions_interval(node) for node in _predicates(target.query)):
        return
    time_column = getattr(target.model.kind, "time_column", "ds")
    yield target.violation(
        NAME,
        f"incremental model does not filter on its time column {time_column}",
        f"add WHERE {time_column} BETWEEN @start_ds AND @end_ds (or filter its source on @start_*/@end_*)",
        near=r"\bSELECT\b",
    )


def _predicates(query: exp.Expression) -> Iterator[exp.Expression]:
    yield from query.find_all(exp.Where, exp.Having, exp.Qualify)
    for join in query.find_all(exp.Join):
        if join.args.get("on") is not None:
            yield join.args["on"]


def _mentions_interval(predicate: exp.Expression) -> bool:
    return any(_is_interval_macro(node) for node in predicate.walk())


def _is_interval_macro(node: exp.Expression) -> bool:
    if isinstance(node, exp.Parameter):
        name = node.name.lower()
    elif isinstance(node, exp.Var) and node.name.startswith("@"):
        name = node.name[1:].lower()
    else:
        return False
    return name.startswith(_INTERVAL_MACROS)


RULE = Rule(NAME, "INCREMENTAL_BY_TIME_RANGE query without a predicate on @start_*/@end_*", check)
