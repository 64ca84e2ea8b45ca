"""A git branch's environment: the branch's head planned into an environment of its own, backfilled over its
preview window, promoted, and compared with prod model by model.

Everything the branch did not change keeps prod's versions, so its environment reads prod's tables for it; a model
it changed gets a version of its own and a table of its own (never one prod reads). When the branch merges, prod's
plan finds those versions already built and only swaps views (for what the preview window covered).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
import uuid

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.engine.table_diff import TableDiff, table_diff
from dagster_sparkmesh.engine.table_profiles import TableProfile, profile_table
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.results import AuditResult, ModelRunResult
from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.stored import store_plan
from dagster_sparkmesh.project.commit_trees import BranchHead, export_project
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import quote_identifier

PROD = "prod"


class ModelComparison(Record):
    """One changed model, prod → branch: both profiles (rows, per-column statistics), and where the model has a
    grain or unique key, the rows joined on it (only on either side, values that differ, a sample)."""

    model: str
    prod: TableProfile | None
    """None when prod has no table of the model (the branch added it)."""
    branch: TableProfile
    keyed: TableDiff | None = None

    @property
    def changed_columns(self) -> tuple[str, ...]:
        """Columns added, dropped (prod's only) or whose statistics differ."""
        if self.prod is None:
            return tuple(column.column for column in self.branch.columns)
        changed = [
            column.column for column in self.branch.columns
            if (before := self.prod.column(column.column)) is None or before.differs_from(column)
        ]
        return (*changed, *(c.column for c in self.prod.columns if self.branch.column(c.column) is None))


class BranchBuild(Record):
    """What one branch head's environment got: its plan, the intervals computed, each changed model against prod."""

    branch: str
    commit: str
    plan: Plan
    intervals_computed: int
    rows_written: int
    comparisons: tuple[ModelComparison, ...]
    audits: tuple[tuple[str, AuditResult], ...] = ()
    """(model, result) of every audit the backfill ran: passed, or failed without blocking (a failed blocking
    audit stops the build with its error)."""


# What runs the project, not what it computes: always the checkout's (a branch's config.yaml may point elsewhere,
# or a relative SQLite path that would resolve inside the export: a state store without prod).
_RUNTIME_SETTINGS = ("gateways", "default_gateway", "state_connection", "environment_ttl", "snapshot_ttl")

BRANCH_PLAN_PREFIX = "branch-"
"""Branch plans' ids start so: an environment promoted by anything else is not a branch's to overwrite."""


def branch_project(checkout: Project, head: BranchHead) -> Project:
    """The project as of the branch's head, read from its export, with the checkout as its home and the checkout's
    runtime settings (gateways and their Spark connection, state store, TTLs)."""
    exported = load_project(export_project(checkout.path, head.commit))
    runtime = {name: getattr(checkout.config, name) for name in _RUNTIME_SETTINGS}
    return exported.model_copy(update={"home": checkout.runtime_path, "config": exported.config.model_copy(update=runtime)})


def plan_branch(ctx: ExecutionContext, head: BranchHead, *, preview_start: datetime | str | None) -> Plan:
    """The branch's plan against its environment (created from prod), stored under its id. ``preview_start``:
    where its backfill starts (None: each model's own start, as a prod plan would).

    Only the models the branch changed are computed: the others are prod's versions, read as prod holds them (a
    branch's run never writes into a table of a version prod serves, whatever prod still lacks)."""
    current = ctx.state.get_environment(ctx.environment)
    if current is not None and not current.plan_id.startswith(BRANCH_PLAN_PREFIX):
        raise PlanError(
            f"environment {ctx.environment} exists and was not made by a branch's plan (plan {current.plan_id})",
            hint=f"rename the branch {head.name!r}, or leave it out of the branch environments' patterns",
        )
    plan_id = f"{BRANCH_PLAN_PREFIX}{head.commit[:12]}-{uuid.uuid4().hex[:12]}"
    plan = build_plan(ctx.project, ctx.state, ctx.environment, start=preview_start, execution_time=ctx.clock(),
                      plan_id=plan_id, partial_intervals=ctx.partial_intervals)
    changed = {*plan.added, *plan.directly_modified, *plan.indirectly_modified}
    own = {name: intervals for name, intervals in plan.missing_intervals.items() if name in changed}
    return store_plan(ctx.state, plan.model_copy(update={"missing_intervals": own}))


def build_branch(
    ctx: ExecutionContext,
    head: BranchHead,
    plan: Plan,
    *,
    on_model_done: Callable[[ModelRunResult], None] | None = None,
    windowed: bool = False,
) -> BranchBuild:
    """Backfill and promote the branch's plan, then compare every changed model with prod (over the plan's window
    only when ``windowed``: a preview window)."""
    applied = apply_plan(ctx, plan, on_model_done=on_model_done)
    return BranchBuild(
        branch=head.name, commit=head.commit, plan=plan, intervals_computed=applied.intervals_processed,
        rows_written=applied.rows_written, comparisons=tuple(compare_with_prod(ctx, plan, windowed)),
        audits=tuple((result.model, audit) for result in applied.models for audit in result.audits),
    )


def compare_with_prod(ctx: ExecutionContext, plan: Plan, windowed: bool = False) -> list[ModelComparison]:
    """Each model with a table that the branch changed, as prod serves it and as the branch does. ``windowed``: the
    branch was built over a preview window only, so a model with a time column is compared over that window on both
    sides (and without the row join, which would count prod's older rows as prod's only)."""
    prod = ctx.state.get_environment(PROD)
    branch = ctx.state.get_environment(ctx.environment)
    found = []
    for name in (*plan.directly_modified, *plan.indirectly_modified, *plan.added):
        model = ctx.project.models.get(name)
        if branch is None or model is None or not model.kind.has_physical_layer:
            continue
        target = branch.relation_of(name)
        source = prod.relation_of(name) if prod is not None and prod.snapshot_for(name) is not None else None
        where = _window(model, plan) if windowed else None
        keyed = None
        if source is not None and where is None and (model.grains or getattr(model.kind, "unique_key", None)):
            keyed = table_diff(ctx.engine, model, source, target)
        found.append(ModelComparison(
            model=name, prod=profile_table(ctx.engine, source, where) if source else None,
            branch=profile_table(ctx.engine, target, where), keyed=keyed,
        ))
    return found


def _window(model: Model, plan: Plan) -> str | None:
    if not model.kind.has_time_column:
        return None
    column = quote_identifier(model.kind.time_column)
    return f"{column} >= TIMESTAMP'{plan.start:%Y-%m-%d %H:%M:%S}' AND {column} < TIMESTAMP'{plan.end:%Y-%m-%d %H:%M:%S}'"
