"""Rule ``unused_cte``: a CTE that nothing reads is dead code (and a sign that the query reads the wrong thing)."""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from dagster_sparkmesh.lint.rule import LintTarget, LintViolation, Rule

NAME = "unused_cte"


def check(target: LintTarget) -> Iterator[LintViolation]:
    if target.query is None:
        return
    for with_ in target.query.find_all(exp.With):
        for cte in with_.expressions:
            if not _is_read(cte, with_.parent):
                yield target.violation(
                    NAME,
                    f"CTE {cte.alias} is defined but never read",
                    f"remove {cte.alias}, or read it where it was meant to be used",
                    near=rf"\b{cte.alias}\s+AS\s*\(",
                )


def _is_read(cte: exp.CTE, scope: exp.Expression | None) -> bool:
    """Read anywhere in the statement owning the WITH, except inside its own definition (recursion is no use)."""
    if scope is None:
        return True
    name = cte.alias.lower()
    for table in scope.find_all(exp.Table):
        if not table.db and table.name.lower() == name and not _inside(table, cte):
            return True
    return False


def _inside(node: exp.Expression, ancestor: exp.Expression) -> bool:
    parent = node.parent
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent
    return False


RULE = Rule(NAME, "a CTE defined in WITH that the query never reads", check)
