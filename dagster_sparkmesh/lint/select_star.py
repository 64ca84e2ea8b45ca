"""Rule ``select_star``: a model read by other models should name its columns.

``SELECT *`` passes every upstream column change on to the readers: a new source column silently changes the
model's schema (and a breaking change cascades) although nobody asked for it.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from dagster_sparkmesh.lint.rule import LintTarget, LintViolation, Rule

NAME = "select_star"


def check(target: LintTarget) -> Iterator[LintViolation]:
    if target.query is None or not isinstance(target.query, exp.Query):
        return
    readers = sorted(target.project.children().get(target.model.name, ()))
    if readers and any(isinstance(column, exp.Star) or column.is_star for column in target.query.selects):
        yield target.violation(
            NAME,
            f"SELECT * in a model read by {', '.join(readers[:3])}{'...' if len(readers) > 3 else ''}",
            "list the columns, so that an upstream schema change does not silently change this model's readers",
            near=r"\bSELECT\s+(?:[A-Za-z_][A-Za-z0-9_]*\.)?\*",
        )


RULE = Rule(NAME, "SELECT * in the outer query of a model that other models read", check)
