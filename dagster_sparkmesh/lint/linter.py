"""Run every rule over every model of a project, minus the rules a model opts out of."""

from __future__ import annotations

from collections.abc import Iterable

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.lint import missing_start, select_star, time_filter, unused_cte
from dagster_sparkmesh.lint.opt_out import ALL, ignored_rules
from dagster_sparkmesh.lint.rule import LintTarget, LintViolation, Rule
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.project.records import Project

RULES: tuple[Rule, ...] = (time_filter.RULE, select_star.RULE, missing_start.RULE, unused_cte.RULE)


def lint_project(project: Project, rules: Iterable[str] | None = None) -> tuple[LintViolation, ...]:
    """Violations in model order; ``rules`` restricts the run to those rule names."""
    chosen = _choose(rules)
    violations: list[LintViolation] = []
    for model in project.models.values():
        target = _target(model, project)
        ignored = ignored_rules(target.text)
        if ALL in ignored:
            continue
        for rule in chosen:
            if rule.name not in ignored:
                violations.extend(rule.check(target))
    return tuple(violations)


def _choose(names: Iterable[str] | None) -> tuple[Rule, ...]:
    if names is None:
        return RULES
    by_name = {rule.name: rule for rule in RULES}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise ProjectError(f"unknown lint rule {unknown[0]!r}", snippet=unknown[0], hint=f"rules: {', '.join(by_name)}")
    return tuple(by_name[name] for name in names)


def _target(model: Model, project: Project) -> LintTarget:
    return LintTarget(model=model, project=project, query=_parse(model.query), text=_read(model))


def _parse(query: str | None) -> exp.Expression | None:
    if query is None:
        return None
    try:
        return sqlglot.parse_one(query, dialect="spark")
    except SqlglotError:
        return None  # the loader already parsed it; a query it accepted but we cannot read is simply not linted


def _read(model: Model) -> str:
    try:
        return model.path.read_text(encoding="utf-8")
    except OSError:
        return ""
