"""Rule ``missing_start``: an incremental model without ``start`` (nor a project default) has no history.

The planner then starts it with the earliest model that has a start (as SQLMesh does), or the day before the
execution time when no model has one: its history depends on other files, and a later ``start`` changes nothing
already computed.
"""

from __future__ import annotations

from collections.abc import Iterator

from dagster_sparkmesh.lint.rule import LintTarget, LintViolation, Rule

NAME = "missing_start"


def check(target: LintTarget) -> Iterator[LintViolation]:
    if target.model.kind.incremental_by_interval and target.model.start is None:
        yield target.violation(
            NAME,
            "incremental model without a start date",
            "write start '2024-01-01' in the MODEL header, or model_defaults.start in config.yaml",
            near=r"\bMODEL\b",
        )


RULE = Rule(NAME, "incremental model without start (and no model_defaults.start)", check)
