"""The janitor: drop what nothing references any more, never what an environment still points at.

1. Environments past their expiry (never prod): drop their views, then their record.
2. Snapshots referenced by no environment and older than the snapshot TTL: drop their physical tables (unless a
   still-referenced snapshot shares the version), their intervals, and their state rows.
3. Forward-only preview tables (``plan.previews``) that no environment points at any more: those of the
   environments dropped in 1 at once (prod never reads them, so no TTL applies), and those of snapshots older
   than the snapshot TTL (a development environment re-planned past its preview). They are found in the catalog.
4. Stored plans (``plan.stored``) older than the snapshot TTL that no environment was promoted with: a plan is
   only needed while its runs and its promotion are under way.
Order matters for invariant 2: views go before the tables they point at.
"""

from __future__ import annotations

from datetime import datetime

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.model.kinds import kind_type
from dagster_sparkmesh.dates import parse_ttl
from dagster_sparkmesh.plan.previews import preview_version
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import (
    PROD,
    is_preview_version,
    period_data_table,
    physical_schema,
    physical_table,
    view_name,
    view_schema,
)
from dagster_sparkmesh.snapshot.records import Interval, Snapshot

# (model name, version, kind name) of a preview table that may have lost its last reference.
_PreviewTable = tuple[str, str, str, str | None]  # name, version, kind, catalog

_ALL_TIME = Interval(start=datetime(1, 1, 1), end=datetime(9999, 12, 31))


class JanitorReport(Record):
    environments_dropped: tuple[str, ...] = ()
    views_dropped: tuple[str, ...] = ()
    tables_dropped: tuple[str, ...] = ()
    snapshots_deleted: int = 0
    plans_deleted: int = 0


def run_janitor(ctx: ExecutionContext) -> JanitorReport:
    now = ctx.clock()
    environments, views, previews = _drop_expired_environments(ctx, now)
    tables, snapshots, orphans = _drop_unreferenced_snapshots(ctx, now - parse_ttl(ctx.project.config.snapshot_ttl))
    tables += _drop_unreferenced_previews(ctx, previews, orphans)
    promoted_with = [environment.plan_id for environment in ctx.state.list_environments()]
    plans = ctx.state.delete_plans(now - parse_ttl(ctx.project.config.snapshot_ttl), keep=promoted_with)
    return JanitorReport(
        environments_dropped=tuple(environments),
        views_dropped=tuple(views),
        tables_dropped=tuple(tables),
        snapshots_deleted=snapshots,
        plans_deleted=plans,
    )


def _drop_expired_environments(
    ctx: ExecutionContext, now: datetime
) -> tuple[list[str], list[str], set[_PreviewTable]]:
    dropped, views, previews = [], [], set()
    for environment in ctx.state.list_environments():
        if environment.name == PROD or environment.expires_at is None or environment.expires_at > now:
            continue
        if _being_promoted(ctx, environment.name, now):
            continue  # the promotion under way extends the expiry; its lease lapses within minutes if it died
        schemas = set()
        for snapshot in environment.view_snapshots:
            view = view_name(snapshot.name, environment.name, snapshot.catalog)
            ctx.engine.catalog.drop_view(view)
            views.append(view)
            schemas.add(view_schema(snapshot.name, environment.name, snapshot.catalog))
        for snapshot in environment.snapshots:
            if snapshot.kind_type.has_physical_layer and is_preview_version(snapshot.version):
                previews.add((snapshot.name, snapshot.version, snapshot.kind_name, snapshot.catalog))
        for schema in schemas:
            if not ctx.engine.catalog.list_tables(schema):
                ctx.engine.catalog.drop_schema(schema, cascade=False)
        ctx.state.delete_environment(environment.name)
        dropped.append(environment.name)
    return dropped, views, previews


def _being_promoted(ctx: ExecutionContext, environment: str, now: datetime) -> bool:
    lease = ctx.state.get_promotion_lease(environment)
    return lease is not None and lease.expires_at > now


def _drop_unreferenced_snapshots(
    ctx: ExecutionContext, older_than: datetime
) -> tuple[list[str], int, set[_PreviewTable]]:
    referenced_ids = set()
    referenced_versions = set()
    for environment in ctx.state.list_environments():
        for snapshot in environment.snapshots:
            referenced_ids.add((snapshot.name, snapshot.fingerprint))
            referenced_versions.add((snapshot.name, snapshot.version))
    stored = ctx.state.all_snapshots()
    referenced_versions |= _read_by_live_views(stored, referenced_versions)
    expired = [s for s in stored if (s.name, s.fingerprint) not in referenced_ids and s.created_at < older_than]
    tables = []
    # Any snapshot past the TTL may have been previewed by a development environment that moved on since (or
    # expired, or whose change prod now holds): its preview table goes once nothing points at it. Younger ones
    # are left alone, as a plan being applied may be writing their preview before promoting it.
    previews = {
        (s.name, preview_version(s), s.kind_name, s.catalog)
        for s in stored
        if s.kind_type.has_physical_layer and s.created_at < older_than
    }
    for snapshot in expired:
        key = (snapshot.name, snapshot.version)
        if key in referenced_versions or not snapshot.kind_type.has_physical_layer:
            continue
        table = physical_table(snapshot.name, snapshot.version, snapshot.catalog)
        if table not in tables:
            _drop_physical(ctx, table, snapshot.kind_name)
            ctx.state.remove_intervals(snapshot.name, snapshot.version, _ALL_TIME)
            ctx.state.record_write_inputs(table, None)
            tables.append(table)
    ctx.state.delete_snapshots([s.id for s in expired])
    return tables, len(expired), previews


def _read_by_live_views(stored: list[Snapshot], live: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """(name, version) of every table a live physical view may read: never drop a table under a view.

    A physical view is created by the first snapshot of its version; releases before views took a new version
    with every parent change let later snapshots share it, so the parents of every snapshot of the version count."""
    versions = {s.id: s.version for s in stored}
    views = [s for s in stored if s.kind_type.physical_is_view]
    read: set[tuple[str, str]] = set()
    while True:  # a kept view's parent may be a view itself: until nothing new is kept
        kept = live | read
        found = {(p.name, versions[p]) for s in views if (s.name, s.version) in kept for p in s.parents if p in versions}
        if found <= read:
            return read
        read |= found


def _drop_unreferenced_previews(
    ctx: ExecutionContext, of_environments: set[_PreviewTable], of_snapshots: set[_PreviewTable]
) -> list[str]:
    """Drop the preview tables no environment points at any more (as listed in the catalog now), and their
    intervals. Most snapshots were never previewed: for those nothing is in the catalog, nothing to do."""
    referenced = {(s.name, s.version) for env in ctx.state.list_environments() for s in env.snapshots}
    unreferenced = sorted((c for c in of_environments | of_snapshots if (c[0], c[1]) not in referenced), key=str)
    schemas = sorted({physical_schema(name, catalog) for name, _, _, catalog in unreferenced})
    listing = {schema: ctx.engine.catalog.list_schema(schema) or set() for schema in schemas}
    dropped = []
    for name, version, kind, catalog in unreferenced:
        table = physical_table(name, version, catalog)
        schema, short_name = table.rsplit(".", 1)
        present = short_name in listing[schema] or period_data_table(short_name) in listing[schema]
        if present:
            _drop_physical(ctx, table, kind)
            dropped.append(table)
        if present or (name, version, kind, catalog) in of_environments:
            ctx.state.delete_intervals(name, version)
    return dropped


def _drop_physical(ctx: ExecutionContext, table: str, kind_name: str) -> None:
    ctx.engine.drop_physical(table, is_view=kind_type(kind_name).physical_is_view)
