"""Numbered schema migrations: migration N brings the state schema from version N-1 to N.

Each migration declares the tables as they were at its version (its own ``MetaData``), never the current
definitions in ``schema``: once a later migration alters a table, an earlier one must still build the old shape.
Migrations run inside the caller's write transaction (DDL is transactional on SQLite and PostgreSQL), so a
failed migration leaves the previous version intact.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from importlib import metadata as package_metadata

import sqlalchemy as sa
import sqlglot

from dagster_sparkmesh.errors import StateError
from dagster_sparkmesh.state import schema
from dagster_sparkmesh.state.records import VersionStamp
from dagster_sparkmesh.state.timestamps import from_text, to_text

Migration = Callable[[sa.Connection], None]


def _v1_initial_tables(connection: sa.Connection) -> None:
    meta = sa.MetaData()
    sa.Table(
        "_versions", meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("schema_version", sa.Integer, nullable=False),
        sa.Column("sqlglot_version", sa.String, nullable=False),
        sa.Column("package_version", sa.String, nullable=False),
        sa.Column("updated_at", sa.String, nullable=False),
    )
    sa.Table(
        "snapshots", meta,
        sa.Column("name", sa.String, primary_key=True),
        sa.Column("fingerprint", sa.String, primary_key=True),
        sa.Column("version", sa.String, nullable=False),
        sa.Column("kind_name", sa.String, nullable=False),
        sa.Column("created_at", sa.String, nullable=False),
        sa.Column("snapshot_json", sa.Text, nullable=False),
        sa.Index("snapshots_name_idx", "name"),
    )
    sa.Table(
        "intervals", meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String, nullable=False),
        sa.Column("version", sa.String, nullable=False),
        sa.Column("start_ts", sa.String, nullable=False),
        sa.Column("end_ts", sa.String, nullable=False),
        sa.Column("created_at", sa.String, nullable=False),
        sa.Index("intervals_name_version_idx", "name", "version"),
    )
    sa.Table(
        "environments", meta,
        sa.Column("name", sa.String, primary_key=True),
        sa.Column("plan_id", sa.String, nullable=False),
        sa.Column("promoted_at", sa.String, nullable=False),
        sa.Column("expires_at", sa.String, nullable=True),
        sa.Column("environment_json", sa.Text, nullable=False),
    )
    sa.Table(
        "environment_history", meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String, nullable=False),
        sa.Column("plan_id", sa.String, nullable=False),
        sa.Column("replaced_at", sa.String, nullable=False),
        sa.Column("environment_json", sa.Text, nullable=False),
        sa.Index("environment_history_name_idx", "name"),
    )
    meta.create_all(connection)


def _v2_plan_application_log(connection: sa.Connection) -> None:
    meta = sa.MetaData()
    sa.Table(
        "plan_applications", meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("plan_id", sa.String, nullable=False),
        sa.Column("environment", sa.String, nullable=False),
        sa.Column("user_name", sa.String, nullable=False),
        sa.Column("host", sa.String, nullable=False),
        sa.Column("summary_json", sa.Text, nullable=False),
        sa.Column("started_at", sa.String, nullable=False),
        sa.Column("ended_at", sa.String, nullable=True),
        sa.Column("outcome", sa.String, nullable=True),
        sa.Column("metrics_json", sa.Text, nullable=True),
        sa.Index("plan_applications_plan_id_idx", "plan_id"),
    )
    meta.create_all(connection)


def _v3_promotion_leases(connection: sa.Connection) -> None:
    meta = sa.MetaData()
    sa.Table(
        "promotion_leases", meta,
        sa.Column("environment", sa.String, primary_key=True),
        sa.Column("plan_id", sa.String, nullable=False),
        sa.Column("holder", sa.String, nullable=False),
        sa.Column("holder_json", sa.Text, nullable=False),
        sa.Column("token", sa.String, nullable=False),
        sa.Column("acquired_at", sa.String, nullable=False),
        sa.Column("expires_at", sa.String, nullable=False),
        sa.Column("views_touched", sa.Boolean, nullable=False),
    )
    meta.create_all(connection)


# Kinds computed whole from their parents' tables as they were at that moment. Frozen as the releases before v4
# knew them (not the kind records of today): a migration replays history, so it filters rows in SQL by name.
_COMPUTED_WHOLE = ("FULL", "VIEW", "INCREMENTAL_BY_UNIQUE_KEY", "SCD_TYPE_2_BY_TIME", "SCD_TYPE_2_BY_COLUMN")
_READABLE_PARENTS = _COMPUTED_WHOLE + ("INCREMENTAL_BY_TIME_RANGE", "SEED")


def _v4_forget_intervals_computed_from_partial_parents(connection: sa.Connection) -> None:
    """Releases before v4 recorded a FULL (view, unique-key, SCD type 2) model complete for every interval, even
    when its parents covered only a few: nobody knows now what they read. Such models with a parent of their own
    project lose their intervals, so the next plan (or Dagster run) computes them from complete parents, and no
    promotion goes ahead before. Views are recreated then, over their parents' current tables."""
    snapshots = sa.table(
        "snapshots", sa.column("name"), sa.column("fingerprint"), sa.column("version"),
        sa.column("kind_name"), sa.column("snapshot_json"),
    )
    intervals = sa.table("intervals", sa.column("name"), sa.column("version"))
    by_kind = snapshots.c.kind_name.in_
    computed_whole = connection.execute(sa.select(snapshots).where(by_kind(_COMPUTED_WHOLE))).all()
    parents = sa.select(snapshots.c.name, snapshots.c.fingerprint).where(by_kind(_READABLE_PARENTS))
    readable = {(row.name, row.fingerprint) for row in connection.execute(parents)}
    stale = {(row.name, row.version) for row in computed_whole if _reads_project_model(row.snapshot_json, readable)}
    for name, version in sorted(stale):
        connection.execute(sa.delete(intervals).where(intervals.c.name == name, intervals.c.version == version))


def _reads_project_model(snapshot_json: str, readable: set[tuple[str, str]]) -> bool:
    parents = json.loads(snapshot_json).get("parents") or []
    return any((p["name"], p["fingerprint"]) in readable for p in parents)


def _v5_stored_plans(connection: sa.Connection) -> None:
    """Plans are stored under their id, so a Dagster run, its steps and the promotion execute the same plan."""
    meta = sa.MetaData()
    sa.Table(
        "plans", meta,
        sa.Column("plan_id", sa.String, primary_key=True),
        sa.Column("environment", sa.String, nullable=False),
        sa.Column("created_at", sa.String, nullable=False),
        sa.Column("prepared_at", sa.String, nullable=True),
        sa.Column("plan_json", sa.Text, nullable=False),
        sa.Index("plans_environment_idx", "environment"),
    )
    meta.create_all(connection)


def _v6_table_write_locks(connection: sa.Connection) -> None:
    """Interval writes into a table whose partitions hold several intervals (a month of days) take turns."""
    meta = sa.MetaData()
    sa.Table(
        "table_write_locks", meta,
        sa.Column("table_name", sa.String, primary_key=True),
        sa.Column("holder_json", sa.Text, nullable=False),
        sa.Column("token", sa.String, nullable=False),
        sa.Column("acquired_at", sa.String, nullable=False),
        sa.Column("expires_at", sa.String, nullable=False),
    )
    meta.create_all(connection)


def _v7_write_inputs(connection: sa.Connection) -> None:
    """A FULL model's write records what it read, so that a run can keep a table whose inputs did not change."""
    meta = sa.MetaData()
    sa.Table(
        "write_inputs", meta,
        sa.Column("table_name", sa.String, primary_key=True),
        sa.Column("digest", sa.String, nullable=False),
        sa.Column("written_at", sa.String, nullable=False),
    )
    meta.create_all(connection)


def _v8_restatement_looks(connection: sa.Connection) -> None:
    """When a run of prod last looked for a model version's scheduled restatements (``auto_restatement_cron``)."""
    meta = sa.MetaData()
    sa.Table(
        "restatement_looks", meta,
        sa.Column("name", sa.String, primary_key=True),
        sa.Column("version", sa.String, primary_key=True),
        sa.Column("looked_at", sa.String, nullable=False),
    )
    meta.create_all(connection)


MIGRATIONS: tuple[Migration, ...] = (
    _v1_initial_tables,
    _v2_plan_application_log,
    _v3_promotion_leases,
    _v4_forget_intervals_computed_from_partial_parents,
    _v5_stored_plans,
    _v6_table_write_locks,
    _v7_write_inputs,
    _v8_restatement_looks,
)
SCHEMA_VERSION = len(MIGRATIONS)


def package_version() -> str:
    try:
        return package_metadata.version("dagster-sparkmesh")
    except package_metadata.PackageNotFoundError:
        return "unknown"


def read_stamp(connection: sa.Connection) -> VersionStamp | None:
    """The version row, or None for an empty database (no ``_versions`` table yet)."""
    if not sa.inspect(connection).has_table(schema.versions.name):
        return None
    row = connection.execute(sa.select(schema.versions).where(schema.versions.c.id == 1)).one_or_none()
    if row is None:
        return None
    return VersionStamp(
        schema_version=row.schema_version,
        sqlglot_version=row.sqlglot_version,
        package_version=row.package_version,
        updated_at=from_text(row.updated_at),
    )


def migrate(connection: sa.Connection, now: datetime, location: str) -> VersionStamp | None:
    """Bring the schema to ``SCHEMA_VERSION``; return the stamp found before migrating (None if empty)."""
    found = read_stamp(connection)
    current = found.schema_version if found else 0
    if current > SCHEMA_VERSION:
        raise StateError(
            f"state schema v{current} is newer than this dagster-sparkmesh (supports v{SCHEMA_VERSION}): "
            "upgrade the package",
            path=location,
            hint=f"the state was last written by dagster-sparkmesh {found.package_version}",
        )
    for number in range(current + 1, SCHEMA_VERSION + 1):
        MIGRATIONS[number - 1](connection)
    if current < SCHEMA_VERSION:
        _write_stamp(connection, found, now)
    return found


def _write_stamp(connection: sa.Connection, found: VersionStamp | None, now: datetime) -> None:
    # The recorded sqlglot version says which sqlglot computed the stored fingerprints, so a migration keeps it;
    # only ``stamp_sqlglot_version`` (after re-fingerprinting) moves it forward.
    values = {
        "schema_version": SCHEMA_VERSION,
        "package_version": package_version(),
        "updated_at": to_text(now),
    }
    if found is None:
        connection.execute(
            sa.insert(schema.versions).values(id=1, sqlglot_version=sqlglot.__version__, **values)
        )
    else:
        connection.execute(sa.update(schema.versions).where(schema.versions.c.id == 1).values(**values))


def stamp_sqlglot_version(connection: sa.Connection, now: datetime) -> None:
    connection.execute(
        sa.update(schema.versions)
        .where(schema.versions.c.id == 1)
        .values(sqlglot_version=sqlglot.__version__, package_version=package_version(), updated_at=to_text(now))
    )
