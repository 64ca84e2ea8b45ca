"""A run of prod and the scheduled restatements (``auto_restatement_cron``): what the run's plan is told about the
last looks, and the looks it records (``plan.auto_restatements``).

A look is recorded once the run's plan is prepared, as SQLMesh records its next restatement time once it removed
the intervals: preparing removed the restated intervals from the state store in one transaction, so from then on they
are missing, and computed by this run or, if it fails or is stopped, by the next. A run stopped before that (a
refusal of the preflight) records nothing, and the next run restates again.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.plan.auto_restatements import restates_on_schedule
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.stored import is_prepared
from dagster_sparkmesh.snapshot.naming import PROD
from dagster_sparkmesh.snapshot.records import Environment


def last_looks(ctx: ExecutionContext, environment: Environment) -> dict[tuple[str, str], datetime] | None:
    """(model, version) → the last run's look, for a run of prod; None elsewhere (no scheduled restatement)."""
    if environment.name != PROD:
        return None
    return ctx.state.restatement_looks((s.name, s.version) for s in environment.snapshots)


def record_looks(
    ctx: ExecutionContext, plan: Plan, selected: Collection[str] | None = None, *, nothing_to_do: bool = False
) -> None:
    """The looks at the models with a schedule (of ``selected``, when the run computes only those), once ``plan``
    is prepared (or there is ``nothing_to_do``: no restatement was due)."""
    if plan.environment != PROD or not (nothing_to_do or is_prepared(ctx.state, plan.plan_id)):
        return
    models = ctx.project.models
    scheduled = [(s.name, s.version) for s in plan.environment_after.snapshots
                 if s.name in models and restates_on_schedule(models[s.name]) and (selected is None or s.name in selected)]
    if scheduled:
        ctx.state.record_restatement_looks(scheduled, plan.execution_time)
