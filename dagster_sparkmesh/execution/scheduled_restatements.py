"""A run of prod and the scheduled restatements (``auto_restatement_cron``): what the run's plan is told about the
last looks, and the looks it records once it has computed everything (``plan.auto_restatements``).

A look is recorded only after the run succeeded: a run that failed or was stopped restates the same models again
next time, which recomputes the same rows, where a look recorded first would lose the restatement.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.plan.auto_restatements import restates_on_schedule
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.snapshot.naming import PROD
from dagster_sparkmesh.snapshot.records import Environment


def last_looks(ctx: ExecutionContext, environment: Environment) -> dict[tuple[str, str], datetime] | None:
    """(model, version) → the last run's look, for a run of prod; None elsewhere (no scheduled restatement)."""
    if environment.name != PROD:
        return None
    return ctx.state.restatement_looks((s.name, s.version) for s in environment.snapshots)


def record_looks(ctx: ExecutionContext, plan: Plan, selected: Collection[str] | None = None) -> None:
    """The run computed what its plan restated: its looks at the models with a schedule (of ``selected``, when the
    run computed only those) are recorded."""
    if plan.environment != PROD:
        return
    models = ctx.project.models
    scheduled = [(s.name, s.version) for s in plan.environment_after.snapshots
                 if s.name in models and restates_on_schedule(models[s.name]) and (selected is None or s.name in selected)]
    if scheduled:
        ctx.state.record_restatement_looks(scheduled, plan.execution_time)
