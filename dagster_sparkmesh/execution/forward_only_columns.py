"""A forward-only change that adds or drops output columns changes the model's table before the model runs (as
SQLMesh migrates a forward-only model's table when the plan is applied): added columns unless its kind says
``on_additive_change ignore``, dropped ones when ``on_destructive_change`` allows it (``engine.column_additions``:
a period table hides them). Whether the plan may do it at all was decided when it was built (``plan.versions``:
``error`` refuses); a drop the plan could not see (a ``*`` projection) is refused here under ``error``, and a
column whose type changes is refused here under any policy, before anything is written.

It runs in the model's own backfill task, in the CLI and in a Dagster step alike, whether or not the model has
intervals to compute: with no ``--effective-from`` nothing is recomputed, and the new columns are NULL in the rows
written before, which is what SQLMesh's prod shows then. It is idempotent: a table that has the columns is left
as it is, so every evaluation of the plan may run it.
"""

from __future__ import annotations

from dagster_sparkmesh.engine.column_additions import (
    DROP_REFUSED, DROP_REFUSED_HINT, add_columns, can_hide_columns, column_changes, hide_columns,
)
from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.writes.queries import rendered_query
from dagster_sparkmesh.model.kinds import ScdType2ByTimeKind
from dagster_sparkmesh.model.table_formats import drops_columns, lakehouse_format
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.snapshot.naming import quote, view_name
from dagster_sparkmesh.snapshot.records import ChangeCategory, Environment, Interval


def _managed(model) -> set[str]:
    """The columns the model's kind adds to its table (SCD type 2 validity), which its query never returns."""
    return {name.lower() for name, _ in model.kind.managed_columns}


def models_on_a_shared_table(plan: Plan, current: Environment | None) -> set[str]:
    """The models whose query in ``plan`` changes while their table stays: a new forward-only version, or a
    change back to a snapshot of the same table (a reverted forward-only change), whose columns may differ."""
    forward_only = {s.name for s in plan.new_snapshots if s.change_category == ChangeCategory.FORWARD_ONLY}
    before = {s.name: s for s in current.snapshots} if current else {}
    reverted = {
        s.name
        for s in plan.environment_after.snapshots
        if s.name in before and before[s.name].version == s.version and before[s.name].fingerprint != s.fingerprint
    }
    return forward_only | reverted


def widen_for_forward_only_change(ctx: ExecutionContext, target: ModelTarget, window: Interval) -> None:
    """Add the columns the model's query has and its existing table lacks; ``window``: an interval to render the
    query for (its columns do not depend on it)."""
    model = target.model
    if not model.kind.may_be_forward_only:  # other kinds never share a table between two queries
        return
    if not ctx.engine.catalog.physical_exists(target.table):
        return  # its first write creates it with every column
    # Only SCD type 2 by time keeps a column by the type its table already holds: the others need no catalog call.
    held = ctx.engine.catalog.columns(target.table) if isinstance(model.kind, ScdType2ByTimeKind) else ()
    typed = model.kind.stored_columns(_query_columns(ctx, target, window), held)
    wanted = model.kind.stored_columns(model.columns, held) if model.columns else typed
    if not wanted:
        return
    changes = column_changes(ctx.engine, target.table, wanted, typed)
    _refuse_retyped(target, changes.retyped)
    if changes.added and getattr(model.kind, "on_additive_change", "allow") != "ignore":
        add_columns(ctx.engine, target.table, changes.added)
        if lakehouse_format(model) is not None:
            _refresh_views(ctx, target)
    dropped = [name for name in changes.dropped if name.lower() not in _managed(model)]
    if dropped:
        _check_drop_allowed(target, dropped)
        if not can_hide_columns(ctx.engine, target.table, droppable=drops_columns(model)):
            raise ExecutionError(
                f"forward-only change to {model.name} drops column(s) {', '.join(dropped)} of its table: {DROP_REFUSED}",
                path=model.path, line=model.line, hint=DROP_REFUSED_HINT,
            )
        hide_columns(ctx.engine, target.table, dropped, droppable=drops_columns(model))
        if lakehouse_format(model) is not None:
            _refresh_views(ctx, target)


def _refresh_views(ctx: ExecutionContext, target: ModelTarget) -> None:
    """Every environment's view of the table, made again over its columns now. An Iceberg view keeps the columns
    it was created with, where a Hive view follows its table (``WITH SCHEMA EVOLUTION``), so the added columns
    would not show; the view is replaced in one commit (``SparkCatalog.alter_view``)."""
    for environment in ctx.state.list_environments():
        snapshot = environment.snapshot_for(target.model.name)
        if snapshot is None or not snapshot.promoted or snapshot.version != target.version:
            continue
        view = view_name(target.model.name, environment.name, target.model.catalog)
        if ctx.engine.catalog.view_exists(view):
            ctx.engine.catalog.alter_view(view, f"SELECT * FROM {quote(target.table)}")


def _refuse_retyped(target: ModelTarget, retyped: list[tuple[str, str, str]]) -> None:
    """A column whose type changes is refused whatever ``on_destructive_change`` says: a Parquet table cannot
    change a column's type in place, and writing the new values into the old column would cast them silently."""
    if retyped:
        described = ", ".join(f"{name} from {old} to {new}" for name, old, new in retyped)
        _refuse(target, f"changes the type of column(s) {described}", "a Parquet table cannot change a column's "
                "type in place: keep the type (CAST to it), add a column under a new name")


def _check_drop_allowed(target: ModelTarget, dropped: list[str]) -> None:
    if getattr(target.model.kind, "on_destructive_change", "error") == "error":
        _refuse(target, f"drops column(s) {', '.join(dropped)}",
                "keep the columns, set on_destructive_change 'warn' or 'allow' in the model's kind (or in model_defaults)")


def _refuse(target: ModelTarget, change: str, options: str) -> None:
    raise ExecutionError(
        f"forward-only change to {target.model.name} {change} of its table",
        path=target.model.path,
        line=target.model.line,
        hint=f"{options}, or make a non-forward-only (breaking) change that rebuilds the table",
    )


def _query_columns(ctx: ExecutionContext, target: ModelTarget, window: Interval) -> tuple[tuple[str, str], ...]:
    if target.model.source == "python":
        return ()  # a Python model's columns are known once it runs; declare them to widen its table
    return tuple(ctx.engine.catalog.query_schema(rendered_query(ctx, target, window)))
