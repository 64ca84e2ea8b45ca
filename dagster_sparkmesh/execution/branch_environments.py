"""A git branch's environment: the branch's head planned into an environment of its own, backfilled over its
preview window, promoted, and compared with prod model by model.

Everything the branch did not change keeps prod's versions, so its environment reads prod's tables for it; a model
it changed gets a version of its own and a table of its own (never one prod reads). When the branch merges, prod's
plan finds those versions already built and only swaps views (for what the preview window covered).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

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
from dagster_sparkmesh.records import Record

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
        if self.prod is None:
            return tuple(column.column for column in self.branch.columns)
        return tuple(
            column.column for column in self.branch.columns
            if (before := self.prod.column(column.column)) is None or before.differs_from(column)
        )


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


def branch_project(checkout: Project | str, head: BranchHead) -> Project:
    """The project as of the branch's head, read from its export, with the checkout as its home (state, warehouse,
    Spark server)."""
    home = checkout.path if isinstance(checkout, Project) else checkout
    exported = export_project(Path(home), head.commit)
    return load_project(exported).model_copy(update={"home": Path(home).resolve()})


def plan_branch(ctx: ExecutionContext, *, preview_start: datetime | str | None) -> Plan:
    """The branch's plan against its environment (created from prod), stored under its id. ``preview_start``:
    where its backfill starts (None: each model's own start, as a prod plan would)."""
    plan = build_plan(ctx.project, ctx.state, ctx.environment, start=preview_start, execution_time=ctx.clock())
    return store_plan(ctx.state, plan)


def build_branch(
    ctx: ExecutionContext,
    head: BranchHead,
    plan: Plan,
    *,
    on_model_done: Callable[[ModelRunResult], None] | None = None,
) -> BranchBuild:
    """Backfill and promote the branch's plan, then compare every changed model with prod."""
    applied = apply_plan(ctx, plan, on_model_done=on_model_done)
    return BranchBuild(
        branch=head.name, commit=head.commit, plan=plan, intervals_computed=applied.intervals_processed,
        rows_written=applied.rows_written, comparisons=tuple(compare_with_prod(ctx, plan)),
        audits=tuple((result.model, audit) for result in applied.models for audit in result.audits),
    )


def compare_with_prod(ctx: ExecutionContext, plan: Plan) -> list[ModelComparison]:
    """Each model with a table that the branch changed, as prod serves it and as the branch does."""
    prod = ctx.state.get_environment(PROD)
    branch = ctx.state.get_environment(ctx.environment)
    found = []
    for name in (*plan.directly_modified, *plan.indirectly_modified, *plan.added):
        model = ctx.project.models.get(name)
        if branch is None or model is None or not model.kind.has_physical_layer:
            continue
        target = branch.relation_of(name)
        source = prod.relation_of(name) if prod is not None and prod.snapshot_for(name) is not None else None
        keyed = None
        if source is not None and (model.grains or getattr(model.kind, "unique_key", None)):
            keyed = table_diff(ctx.engine, model, source, target)
        found.append(ModelComparison(
            model=name, prod=profile_table(ctx.engine, source) if source else None,
            branch=profile_table(ctx.engine, target), keyed=keyed,
        ))
    return found
