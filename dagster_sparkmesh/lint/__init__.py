"""``sparkmesh lint``: rules that find model definitions which load fine but are probably wrong or wasteful."""

from dagster_sparkmesh.lint.linter import RULES, lint_project
from dagster_sparkmesh.lint.rule import LintViolation, Rule

__all__ = ["RULES", "LintViolation", "Rule", "lint_project"]
