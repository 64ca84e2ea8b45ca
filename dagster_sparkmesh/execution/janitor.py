"""The janitor: drop what nothing references any more, never what an environment still points at.

1. Environments past their expiry (never prod): drop their views, then their record.
2. Snapshots referenced by no environment and older than the snapshot TTL: drop their physical tables (unless a
   still-referenced snapshot shares the version), their intervals, and their state rows.
Order matters for invariant 2: views go before the tables they point at.
"""

from __future__ import annotations

from datetime import datetime

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.model.kinds import MATERIALIZED_KINDS
from dagster_sparkmesh.plan.dates import parse_ttl
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import PROD, physical_table, view_name, view_schema
from dagster_sparkmesh.snapshot.records import Interval

_ALL_TIME = Interval(start=datetime(1, 1, 1), end=datetime(9999, 12, 31))


class JanitorReport(Record):
    environments_dropped: tuple[str, ...] = ()
    views_dropped: tuple[str, ...] = ()
    tables_dropped: tuple[str, ...] = ()
    snapshots_deleted: int = 0


def run_janitor(ctx: ExecutionContext) -> JanitorReport:
    now = ctx.clock()
    environments, views = _drop_expired_environments(ctx, now)
    tables, snapshots = _drop_unreferenced_snapshots(ctx, now - parse_ttl(ctx.project.config.snapshot_ttl))
    return JanitorReport(
        environments_dropped=tuple(environments),
        views_dropped=tuple(views),
        tables_dropped=tuple(tables),
        snapshots_deleted=snapshots,
    )


def _drop_expired_environments(ctx: ExecutionContext, now: datetime) -> tuple[list[str], list[str]]:
    dropped, views = [], []
    for environment in ctx.state.list_environments():
        if environment.name == PROD or environment.expires_at is None or environment.expires_at > now:
            continue
        schemas = set()
        for snapshot in environment.snapshots:
            if snapshot.kind_name in MATERIALIZED_KINDS:
                ctx.engine.drop_view(view_name(snapshot.name, environment.name))
                views.append(view_name(snapshot.name, environment.name))
                schemas.add(view_schema(snapshot.name, environment.name))
        for schema in schemas:
            if not ctx.engine.list_tables(schema):
                ctx.engine.drop_schema(schema, cascade=False)
        ctx.state.delete_environment(environment.name)
        dropped.append(environment.name)
    return dropped, views


def _drop_unreferenced_snapshots(ctx: ExecutionContext, older_than: datetime) -> tuple[list[str], int]:
    referenced_ids = set()
    referenced_versions = set()
    for environment in ctx.state.list_environments():
        for snapshot in environment.snapshots:
            referenced_ids.add((snapshot.name, snapshot.fingerprint))
            referenced_versions.add((snapshot.name, snapshot.version))
    expired = [
        s
        for s in ctx.state.all_snapshots()
        if (s.name, s.fingerprint) not in referenced_ids and s.created_at < older_than
    ]
    tables = []
    for snapshot in expired:
        key = (snapshot.name, snapshot.version)
        if key in referenced_versions or snapshot.kind_name not in MATERIALIZED_KINDS:
            continue
        table = physical_table(snapshot.name, snapshot.version)
        if table not in tables:
            _drop_physical(ctx, table, snapshot.kind_name)
            ctx.state.remove_intervals(snapshot.name, snapshot.version, _ALL_TIME)
            tables.append(table)
    ctx.state.delete_snapshots([s.id for s in expired])
    return tables, len(expired)


def _drop_physical(ctx: ExecutionContext, table: str, kind_name: str) -> None:
    if kind_name == "VIEW":
        ctx.engine.drop_view(table)
    else:
        ctx.engine.drop_table(table)
