"""``sparkmesh destroy``: drop every view, table and schema the project created, then the state itself.

What the project created is what the state store knows: each environment's views, each snapshot's physical
table, and the preview tables development environments computed for forward-only changes (``plan.previews``).
Views go first (architecture invariant 2: never a view over a dropped table), then tables, then the schemas that
are left empty; a schema that still holds something sparkmesh did not create is kept and reported. The state goes
last, so that an interrupted destroy can simply be run again.
"""

from __future__ import annotations

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.model.kinds import kind_type
from dagster_sparkmesh.plan.previews import preview_version
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import (
    is_preview_version,
    period_data_table,
    physical_schema,
    physical_table,
    view_name,
    view_schema,
)
from dagster_sparkmesh.state import schema as state_schema
from dagster_sparkmesh.state.connection import write_transaction


class DestroyReport(Record):
    views_dropped: tuple[str, ...] = ()
    tables_dropped: tuple[str, ...] = ()
    schemas_dropped: tuple[str, ...] = ()
    schemas_kept: tuple[str, ...] = ()
    """Schemas that still hold objects sparkmesh did not create."""
    environments: tuple[str, ...] = ()


def destroy(ctx: ExecutionContext) -> DestroyReport:
    environments = ctx.state.list_environments()
    views, view_schemas = _drop_views(ctx, environments)
    tables, table_schemas = _drop_tables(ctx)
    tables += _drop_preview_tables(ctx, environments)
    dropped, kept = _drop_empty_schemas(ctx, view_schemas | table_schemas)
    _drop_state(ctx)
    return DestroyReport(
        views_dropped=tuple(views),
        tables_dropped=tuple(tables),
        schemas_dropped=tuple(dropped),
        schemas_kept=tuple(kept),
        environments=tuple(env.name for env in environments),
    )


def _drop_views(ctx: ExecutionContext, environments: list) -> tuple[list[str], set[str]]:
    views: list[str] = []
    schemas: set[str] = set()
    for env in environments:
        for snapshot in env.view_snapshots:
            view = view_name(snapshot.name, env.name, snapshot.catalog)
            ctx.engine.catalog.drop_view(view)
            views.append(view)
            schemas.add(view_schema(snapshot.name, env.name, snapshot.catalog))
    return views, schemas


def _drop_tables(ctx: ExecutionContext) -> tuple[list[str], set[str]]:
    tables: list[str] = []
    schemas: set[str] = set()
    for snapshot in ctx.state.all_snapshots():
        if not snapshot.kind_type.has_physical_layer:
            continue
        table = physical_table(snapshot.name, snapshot.version, snapshot.catalog)
        if table in tables:
            continue  # snapshots sharing a version share the table
        ctx.engine.drop_physical(table, is_view=snapshot.kind_type.physical_is_view)
        tables.append(table)
        schemas.add(physical_schema(snapshot.name, snapshot.catalog))
    return tables, schemas


def _drop_preview_tables(ctx: ExecutionContext, environments: list) -> list[str]:
    """Preview tables of the environments and of any stored snapshot, those the catalog lists (one listing per
    schema: most snapshots were never previewed)."""
    in_use = [s for env in environments for s in env.snapshots]
    candidates = {(s.name, s.version, s.kind_name, s.catalog) for s in in_use if is_preview_version(s.version)}
    stored = [s for s in ctx.state.all_snapshots() if s.kind_type.has_physical_layer]
    candidates |= {(s.name, preview_version(s), s.kind_name, s.catalog) for s in stored}
    schemas = {physical_schema(name, catalog) for name, _, _, catalog in candidates}
    listing = {schema: ctx.engine.catalog.list_schema(schema) or set() for schema in schemas}
    dropped = []
    for name, version, kind, catalog in sorted(candidates, key=str):
        table = physical_table(name, version, catalog)
        schema, short_name = table.rsplit(".", 1)
        if short_name not in listing[schema] and period_data_table(short_name) not in listing[schema]:
            continue
        ctx.engine.drop_physical(table, is_view=kind_type(kind).physical_is_view)
        dropped.append(table)
    return dropped


def _drop_empty_schemas(ctx: ExecutionContext, schemas: set[str]) -> tuple[list[str], list[str]]:
    dropped, kept = [], []
    for schema in sorted(schemas):  # (of the session's catalog or of a model's own: listed where it lives)
        listing = ctx.engine.catalog.list_schema(schema)
        if listing is None:
            continue
        if listing:
            kept.append(schema)
        else:
            ctx.engine.catalog.drop_schema(schema, cascade=False)
            dropped.append(schema)
    return dropped, kept


def _drop_state(ctx: ExecutionContext) -> None:
    # Every table the migrations created, the version stamp included: the next command starts from an empty store.
    with write_transaction(ctx.state.engine) as connection:
        state_schema.metadata.drop_all(connection, checkfirst=True)
