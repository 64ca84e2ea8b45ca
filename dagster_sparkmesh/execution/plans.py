"""Where an execution's plan comes from: built once per decision and stored, then loaded wherever it is executed.

- ``plan_for``: a new plan of the context's project and environment (a CLI ``plan`` or ``run``, a sensor tick).
- ``plan_for_run``: the plan a Dagster run executes: the one its ``sparkmesh/plan_id`` tag names, checked to match
  the loaded project; a run launched without the tag (from the UI) gets one built by its first step and stored
  under ``dagster-<run id>``, which its other steps load. A person's run restates what its selection holds
  (``Restate``): "Materialize" of complete partitions recomputes them, and their readers, as ``plan --restate-model``
  would, and computes the gaps beside them; a model with nothing recorded in the selection is only computed (its
  readers are not restated for it). A re-execution of a run resumes: it computes the gaps only.
- ``plan_to_promote``: what the promotion asset promotes: the plan its run names, else the environment's latest
  stored plan when it still matches the project and the environment, else a new one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.plan.stored import changed_since, check_current, decode, load_plan, store_plan

RUN_PLAN_PREFIX = "dagster-"
PLAN_ID_TAG = "sparkmesh/plan_id"
"""The Dagster run tag naming the stored plan a run executes (the git sensor sets it)."""


def plan_for(ctx: ExecutionContext, start: datetime | None = None, end: datetime | None = None, **options) -> Plan:
    options.setdefault("partial_intervals", ctx.partial_intervals)
    return build_plan(
        ctx.project, ctx.state, ctx.environment, start=start, end=end, execution_time=ctx.clock(), **options
    )


@dataclass(frozen=True)
class Restate:
    """What a person's run recomputes even where it is complete: its models over its window (None: their whole
    window in the plan)."""

    models: tuple[str, ...]
    start: datetime | None = None
    end: datetime | None = None


def plan_for_run(ctx: ExecutionContext, plan_id: str | None, run_id: str, restate: Restate | None = None) -> Plan:
    """The plan of a Dagster run, built at most once per run (not once per step)."""
    if plan_id:
        plan = load_plan(ctx.state, plan_id)
        check_current(plan, ctx.project)
        return plan
    own_id = f"{RUN_PLAN_PREFIX}{run_id}"
    stored = ctx.state.get_plan(own_id)
    if stored is not None:
        return load_plan(ctx.state, own_id)
    plan = plan_for(ctx, plan_id=own_id)
    holding = _holding_data(ctx, plan, restate) if restate is not None else ()
    if holding:
        within = Interval(start=restate.start, end=restate.end) if restate.start and restate.end else None
        plan = plan_for(ctx, plan_id=own_id, restate_models=holding, restate_within=within)
    return store_plan(ctx.state, plan)


def _holding_data(ctx: ExecutionContext, plan: Plan, restate: Restate) -> tuple[str, ...]:
    """The models of ``restate`` with an interval recorded inside its window: those are recomputed. A model whose
    selection is all gaps (a new version's first backfill) is computed without restating its readers. A step
    without partitions (FULL, SCD type 2, ...) is recomputed or merged anyway: it restates (its readers' whole
    history with it) only when nothing of it is due."""
    if restate.start is None:
        due = any(plan.missing_intervals.get(name) for name in restate.models)
        return () if due else restate.models
    holding = []
    for name in restate.models:
        version = plan.version_of(name)
        recorded = ctx.state.get_intervals(name, version) if version is not None else []
        if any(i.start < restate.end and restate.start < i.end for i in recorded):
            holding.append(name)
    return tuple(holding)


def plan_to_promote(ctx: ExecutionContext, plan_id: str | None) -> Plan:
    """The plan whose backfill the promotion completes."""
    if plan_id:
        plan = load_plan(ctx.state, plan_id)
        check_current(plan, ctx.project)
        return plan
    latest = ctx.state.latest_plan(ctx.environment)
    if latest is not None and latest.prepared_at is not None:
        plan = decode(latest.plan_json)
        current = ctx.state.get_environment(ctx.environment)
        if not changed_since(plan, ctx.project) and plan.previous_plan_id == (current.plan_id if current else None):
            return plan
    return store_plan(ctx.state, plan_for(ctx))
