"""Promotion: point an environment's views at the plan's physical tables, then swap the environment record.

Physical before virtual, by construction (architecture invariant 2): before any view is touched, every interval the
environment needs must be recorded in the state store and every physical table must exist in the catalog *now*
(listed from the catalog, never from a cache). Views are created if missing, else swapped with ``ALTER VIEW``
(atomic for readers), several at a time (no view reads another); only views whose target changes are touched.
The environment record is swapped last, in one transaction that fails if another promotion got there first.

Racing promotions (invariant 7): the environment's promotion lease (``state.leases``) is taken before anything
else and given back in the transaction that swaps the record, so views are swapped by one promotion at a time.
A loser fails at the lease, or after the winner finished, at the plan-id check: either way before any view.
A promotion that takes over the lease of one that died while swapping views re-points every view.
"""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from typing import TYPE_CHECKING

from dagster_sparkmesh.errors import EngineError, ExecutionError, StateConflictError
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.crashpoints import crashpoint
from dagster_sparkmesh.execution.results import PromotionResult, ViewChange
from dagster_sparkmesh.plan.coverage import lacking_inputs
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.explain import format_plan
from dagster_sparkmesh.plan.stored import decode
from dagster_sparkmesh.project.rendering import render_statements
from dagster_sparkmesh.snapshot.naming import physical_table, quote, schema_of, view_name
from dagster_sparkmesh.snapshot.records import Environment, Interval, Snapshot
from dagster_sparkmesh.state.leases import LEASE_DURATION, abandoned

if TYPE_CHECKING:
    from dagster_sparkmesh.state.records import PromotionLease
    from dagster_sparkmesh.state.store import StateStore

# Schema -> names of its tables and views as listed at the start of the promotion; None: the schema does not exist.
CatalogListing = dict[str, set[str] | None]

RENEW_LEASE_EVERY_SECONDS = 60.0
"""Between view swaps, extend the lease when this long passed since it was taken or last extended: a state write
per minute at most, far inside ``LEASE_DURATION`` (10 minutes), instead of one per view."""


def promoted_by_another(ctx: ExecutionContext, plan: Plan, *, timeout: float | None = None) -> bool:
    """After losing the lease: whether another process promoting this same plan (Dagster may launch the promotion
    from a backfill and from the automation sensor at once) finished it. Waits while that one holds the lease and
    lives (at most a lease's duration: the holder renews it while it swaps views)."""
    deadline = time.monotonic() + (LEASE_DURATION.total_seconds() if timeout is None else timeout)
    while True:
        environment = ctx.state.get_environment(ctx.environment)
        if environment is not None and environment.plan_id == plan.plan_id:
            return True
        lease = ctx.state.get_promotion_lease(ctx.environment)
        if lease is None or lease.plan_id != plan.plan_id or abandoned(lease, ctx.clock()):
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)


def promote(ctx: ExecutionContext, plan: Plan) -> PromotionResult:
    """The promotion stage of ``plan`` (its snapshots were pushed when it was prepared: ``execution.apply``)."""
    lease = _HeldLease(ctx.state, ctx.state.acquire_promotion_lease(ctx.environment, plan.plan_id))
    try:
        changes = _promote_holding(ctx, plan, lease)
    except BaseException:
        lease.release()
        raise
    crashpoint("after_environment_swap")
    _run_on_virtual_update(ctx, plan, changes)
    return PromotionResult(
        environment=ctx.environment,
        plan_id=plan.plan_id,
        previous_plan_id=plan.previous_plan_id,
        views=tuple(changes),
        snapshots=tuple(f"{s.name}@{s.version}" for s in plan.environment_after.snapshots),
        promoted_at=plan.environment_after.promoted_at,
        summary=format_plan(plan),
    )


def _promote_holding(ctx: ExecutionContext, plan: Plan, lease: _HeldLease) -> list[ViewChange]:
    current = ctx.state.get_environment(ctx.environment)
    _check_not_superseded(ctx, plan, current)
    _verify_intervals_complete(ctx, plan)
    _verify_inputs_complete(ctx, plan)
    interrupted = _interrupted_views(ctx, lease.interrupted_plan_id)
    listing = _catalog_listing(ctx, plan, interrupted)
    _verify_physical_tables_exist(ctx, plan, listing)
    changes = view_changes(
        plan, current, ctx.environment, in_catalog=lambda view: _in_catalog(listing, view),
        repoint_all=lease.views_may_differ, interrupted=interrupted,
    )
    _create_missing_schemas(ctx, changes, listing)
    _apply_view_changes(ctx, changes, lease)
    crashpoint("environment_swap")
    lease.swap_environment(plan.environment_after, expected_plan_id=plan.previous_plan_id)
    return changes


class _HeldLease:
    """The promotion lease while ``promote`` holds it: extended as views are swapped, given back exactly once."""

    def __init__(self, state: StateStore, lease: PromotionLease) -> None:
        self._state = state
        self._lease: PromotionLease | None = lease
        self._renewed_at = time.monotonic()
        self.views_may_differ = lease.views_touched
        self.interrupted_plan_id = lease.interrupted_plan_id

    def before_view_change(self) -> None:
        """Record that views are being swapped before the first one, then keep the lease from expiring."""
        lease = self._held()
        if lease.views_touched and time.monotonic() - self._renewed_at < RENEW_LEASE_EVERY_SECONDS:
            return
        self._lease = self._state.renew_promotion_lease(lease, views_touched=True)
        self._renewed_at = time.monotonic()

    def swap_environment(self, environment: Environment, *, expected_plan_id: str | None) -> None:
        self._state.promote_environment(environment, expected_plan_id, lease=self._held())
        self._lease = None

    def release(self) -> None:
        if self._lease is None:
            return
        lease, self._lease = self._lease, None
        # The promotion's own error is what the user needs to see; a lease not given back expires anyway.
        with contextlib.suppress(Exception):
            self._state.release_promotion_lease(lease)

    def _held(self) -> PromotionLease:
        if self._lease is None:
            raise RuntimeError("the promotion lease was already given back")
        return self._lease


def _check_not_superseded(ctx: ExecutionContext, plan: Plan, current: Environment | None) -> None:
    current_id = current.plan_id if current else None
    if current_id != plan.previous_plan_id:
        raise StateConflictError(
            f"environment {ctx.environment} was promoted by plan {current_id} after this plan was built "
            f"from plan {plan.previous_plan_id}",
            hint="plan again: nothing was changed",
        )


def _verify_intervals_complete(ctx: ExecutionContext, plan: Plan) -> None:
    missing: dict[str, list[str]] = {}
    for snapshot in plan.environment_after.view_snapshots:
        # A rebuilt model lists its intervals from its own start; before the plan's window, what its parents lack
        # there it lacks too (``plan.coverage``), and the plan asks for nothing there.
        expected = [i for i in plan.missing_intervals.get(snapshot.name, ()) if i.end > plan.start]
        if not expected:
            continue
        still_missing = ctx.state.missing_intervals(snapshot.name, snapshot.version, expected)
        if still_missing:
            missing[snapshot.name] = [f"[{i.start:%Y-%m-%d %H:%M}, {i.end:%Y-%m-%d %H:%M})" for i in still_missing]
    if missing:
        lines = [f"{name}: {len(ranges)} missing, first {ranges[0]}" for name, ranges in sorted(missing.items())]
        raise MissingIntervals(
            f"cannot promote {ctx.environment}: {len(missing)} model(s) have missing intervals",
            snippet="\n".join(lines),
            hint="backfill them first (sparkmesh plan / run, or materialize the partitions in Dagster); no view was changed",
            missing=missing,
        )


def _verify_inputs_complete(ctx: ExecutionContext, plan: Plan) -> None:
    """No model may hold an interval (within the plan's window) that one of its parents lacks: it would have been
    computed from incomplete data. Checked edge by edge, so it holds all the way up the DAG."""
    versions = {s.name: s.version for s in plan.environment_after.snapshots}
    window = Interval(start=plan.start, end=plan.end)
    lacking = lacking_inputs(ctx.project, versions, window, _CachedIntervals(ctx.state), ctx.clock())
    if not lacking:
        return
    lines = [f"{name}: {'; '.join(gap.describe() for gap in gaps[:3])}" for name, gaps in sorted(lacking.items())]
    raise MissingIntervals(
        f"cannot promote {ctx.environment}: {len(lacking)} model(s) hold intervals their parents lack",
        snippet="\n".join(lines),
        hint="plan again (or materialize the parents' partitions, then these models): they are recomputed from "
        "complete inputs; no view was changed",
        missing={name: [gap.describe() for gap in gaps] for name, gaps in lacking.items()},
    )


class _CachedIntervals:
    """The state store's intervals, each (name, version) read once: the check visits every edge of the DAG."""

    def __init__(self, state: StateStore) -> None:
        self._state = state
        self._read: dict[tuple[str, str], list[Interval]] = {}

    def get_intervals(self, name: str, version: str) -> list[Interval]:
        key = (name, version)
        if key not in self._read:
            self._read[key] = self._state.get_intervals(name, version)
        return self._read[key]


def _catalog_listing(ctx: ExecutionContext, plan: Plan, interrupted: tuple[Snapshot, ...] = ()) -> CatalogListing:
    """Every physical and view schema the promotion touches (an interrupted promotion's views too), listed from
    the catalog now: one round trip each, ``max_workers`` at a time."""
    env = ctx.environment
    schemas = {schema_of(physical_table(s.name, s.version, s.catalog)) for s in plan.environment_after.view_snapshots}
    schemas |= {schema_of(view_name(s.name, env, s.catalog)) for s in (*plan.environment_after.view_snapshots, *interrupted)}
    ordered = sorted(schemas)
    with _workers(ctx) as pool:
        return dict(zip(ordered, pool.map(ctx.engine.catalog.list_schema, ordered)))


def _workers(ctx: ExecutionContext) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max(1, ctx.max_workers), thread_name_prefix=f"{threading.current_thread().name}-views")


def _in_catalog(listing: CatalogListing, qualified: str) -> bool:
    schema, name = qualified.rsplit(".", 1)
    return name in (listing.get(schema) or ())


def _verify_physical_tables_exist(ctx: ExecutionContext, plan: Plan, listing: CatalogListing) -> None:
    tables = [physical_table(s.name, s.version, s.catalog) for s in plan.environment_after.view_snapshots]
    # A catalog may list only part of what it holds: Iceberg's session catalog over another catalog (a team's
    # JDBC or REST catalog) lists the metastore's tables, not its own. What the listing lacks is looked up.
    absent = [table for table in tables if not _in_catalog(listing, table) and not ctx.engine.catalog.physical_exists(table)]
    if absent:
        raise ExecutionError(
            f"cannot promote {ctx.environment}: {len(absent)} physical table(s) are not in the catalog",
            snippet="\n".join(sorted(absent)),
            hint="their intervals are recorded but the tables are gone: run `sparkmesh plan --restate-model ...` "
            "or invalidate their intervals; no view was changed",
        )


def view_changes(
    plan: Plan,
    current: Environment | None,
    environment: str,
    *,
    in_catalog: Callable[[str], bool] | None = None,
    repoint_all: bool = False,
    interrupted: tuple[Snapshot, ...] = (),
) -> list[ViewChange]:
    """The views of ``environment`` to create, alter or drop for ``plan``. ``in_catalog``: whether a view exists
    (None: as ``current``'s record says, what a plan shows before it runs); ``repoint_all``: the views may not
    match the record, alter every one; ``interrupted``: the view snapshots of a promotion that crashed while it
    swapped views, whose views of models this plan does not have may exist though no record names them."""
    changes = []
    for snapshot in plan.environment_after.view_snapshots:
        view = view_name(snapshot.name, environment, snapshot.catalog)
        before = current.snapshot_for(snapshot.name) if current else None
        had_view = before is not None and before.promoted
        if had_view and before.catalog != snapshot.catalog:  # its catalog was declared (or no longer is)
            old_view = view_name(snapshot.name, environment, before.catalog)
            changes.append(ViewChange(model=snapshot.name, view=old_view, target="", action="drop"))
            had_view = False
        exists = in_catalog(view) if in_catalog is not None else had_view
        if exists and not repoint_all and had_view and before.version == snapshot.version:
            continue
        target = physical_table(snapshot.name, snapshot.version, snapshot.catalog)
        changes.append(ViewChange(model=snapshot.name, view=view, target=target, action="alter" if exists else "create"))
    kept = {s.name for s in plan.environment_after.view_snapshots}
    recorded = {s.name for s in current.view_snapshots} if current else set()
    for snapshot in current.view_snapshots if current else ():
        if snapshot.name not in kept:
            view = view_name(snapshot.name, environment, snapshot.catalog)
            changes.append(ViewChange(model=snapshot.name, view=view, target="", action="drop"))
    catalog_of = {s.name: s.catalog for s in interrupted}
    for name in sorted(catalog_of.keys() - kept - recorded):
        view = view_name(name, environment, catalog_of[name])
        if in_catalog is not None and in_catalog(view):
            changes.append(ViewChange(model=name, view=view, target="", action="drop"))
    return changes


def _interrupted_views(ctx: ExecutionContext, plan_id: str | None) -> tuple[Snapshot, ...]:
    """The view snapshots of the plan whose promotion crashed while swapping views (nothing if it is gone)."""
    stored = ctx.state.get_plan(plan_id) if plan_id else None
    return tuple(decode(stored.plan_json).environment_after.view_snapshots) if stored is not None else ()


def _create_missing_schemas(ctx: ExecutionContext, changes: list[ViewChange], listing: CatalogListing) -> None:
    for schema in sorted({schema_of(c.view) for c in changes if c.action != "drop"}):
        if listing.get(schema) is None:
            ctx.engine.catalog.create_schema(schema)
            listing[schema] = set()


def _apply_view_changes(ctx: ExecutionContext, changes: list[ViewChange], lease: _HeldLease) -> None:
    """Swap the views, ``max_workers`` at a time: each is a metastore round trip (~0.15 s over Spark Connect), and
    no view reads another (each selects from a physical table that exists already), so their order is free. The
    lease is extended between groups."""
    group = max(1, ctx.max_workers) * 4
    with _workers(ctx) as pool:
        for first in range(0, len(changes), group):
            lease.before_view_change()
            list(pool.map(lambda change: _apply_view_change(ctx, change), changes[first:first + group]))


def _apply_view_change(ctx: ExecutionContext, change: ViewChange) -> None:
    crashpoint("view_swap")
    if change.action == "drop":
        ctx.engine.catalog.drop_view(change.view)
        return
    select = f"SELECT * FROM {quote(change.target)}"
    if change.action == "alter":
        # The view was just listed from the catalog: one ALTER VIEW suffices (each round trip costs 0.05-1 s over
        # Spark Connect). Dropped meanwhile by someone else: create it below.
        try:
            ctx.engine.catalog.alter_view(change.view, select)
            return
        except EngineError:
            pass
    ctx.engine.catalog.create_or_alter_view(change.view, select, known_missing=change.action == "create")


def _run_on_virtual_update(ctx: ExecutionContext, plan: Plan, changes: list[ViewChange]) -> None:
    """Each re-pointed model's ``on_virtual_update`` statements, ``@this_model`` being its view (grants, comments).
    The environment is promoted already: a failing statement is reported, and nothing is undone."""
    tables = plan.tables(ctx.project.external_models)
    for change in (c for c in changes if c.action != "drop"):
        model = ctx.project.models.get(change.model)
        if model is None or not model.on_virtual_update:
            continue
        statements = render_statements(
            model,
            model.on_virtual_update,
            start=plan.start,
            end=plan.end,
            execution_time=ctx.clock(),
            table_for=lambda name, model=model, view=change.view: view if name == model.name else tables.get(name),
            models=ctx.project.models,
            variables=ctx.project.config.variables,
        )
        for statement in statements:
            try:
                ctx.engine.catalog.execute(statement)
            except EngineError as error:
                raise ExecutionError(
                    f"{ctx.environment} was promoted, but on_virtual_update of {model.name} failed: {error.message}",
                    path=model.path,
                    snippet=statement,
                    hint="fix the statement; the views already point at the new tables",
                ) from error


class MissingIntervals(ExecutionError):
    def __init__(self, message: str, *, missing: dict[str, list[str]], **details) -> None:
        self.missing = missing
        super().__init__(message, **details)
