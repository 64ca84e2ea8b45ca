"""The current tables of the state store (SQLAlchemy Core), as the numbered migrations leave them.

Datetimes are fixed-width ISO text (see ``timestamps``); records are kept whole as JSON next to the key columns
that queries filter on, so adding a field to a record needs no migration.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

versions = sa.Table(
    "_versions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("schema_version", sa.Integer, nullable=False),
    sa.Column("sqlglot_version", sa.String, nullable=False),
    sa.Column("package_version", sa.String, nullable=False),
    sa.Column("updated_at", sa.String, nullable=False),
)

snapshots = sa.Table(
    "snapshots",
    metadata,
    sa.Column("name", sa.String, primary_key=True),
    sa.Column("fingerprint", sa.String, primary_key=True),
    sa.Column("version", sa.String, nullable=False),
    sa.Column("kind_name", sa.String, nullable=False),
    sa.Column("created_at", sa.String, nullable=False),
    sa.Column("snapshot_json", sa.Text, nullable=False),
    sa.Index("snapshots_name_idx", "name"),
)

intervals = sa.Table(
    "intervals",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String, nullable=False),
    sa.Column("version", sa.String, nullable=False),
    sa.Column("start_ts", sa.String, nullable=False),
    sa.Column("end_ts", sa.String, nullable=False),
    sa.Column("created_at", sa.String, nullable=False),
    sa.Index("intervals_name_version_idx", "name", "version"),
)

environments = sa.Table(
    "environments",
    metadata,
    sa.Column("name", sa.String, primary_key=True),
    sa.Column("plan_id", sa.String, nullable=False),
    sa.Column("promoted_at", sa.String, nullable=False),
    sa.Column("expires_at", sa.String, nullable=True),
    sa.Column("environment_json", sa.Text, nullable=False),
)

environment_history = sa.Table(
    "environment_history",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String, nullable=False),
    sa.Column("plan_id", sa.String, nullable=False),
    sa.Column("replaced_at", sa.String, nullable=False),
    sa.Column("environment_json", sa.Text, nullable=False),
    sa.Index("environment_history_name_idx", "name"),
)

plan_applications = sa.Table(
    "plan_applications",
    metadata,
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

promotion_leases = sa.Table(
    "promotion_leases",
    metadata,
    sa.Column("environment", sa.String, primary_key=True),
    sa.Column("plan_id", sa.String, nullable=False),
    sa.Column("holder", sa.String, nullable=False),
    sa.Column("holder_json", sa.Text, nullable=False),
    sa.Column("token", sa.String, nullable=False),
    sa.Column("acquired_at", sa.String, nullable=False),
    sa.Column("expires_at", sa.String, nullable=False),
    sa.Column("views_touched", sa.Boolean, nullable=False),
)

table_write_locks = sa.Table(
    "table_write_locks",
    metadata,
    sa.Column("table_name", sa.String, primary_key=True),
    sa.Column("holder_json", sa.Text, nullable=False),
    sa.Column("token", sa.String, nullable=False),
    sa.Column("acquired_at", sa.String, nullable=False),
    sa.Column("expires_at", sa.String, nullable=False),
)

write_inputs = sa.Table(
    "write_inputs",
    metadata,
    sa.Column("table_name", sa.String, primary_key=True),
    sa.Column("digest", sa.String, nullable=False),
    sa.Column("written_at", sa.String, nullable=False),
)

restatement_looks = sa.Table(
    "restatement_looks",
    metadata,
    sa.Column("name", sa.String, primary_key=True),
    sa.Column("version", sa.String, primary_key=True),
    sa.Column("looked_at", sa.String, nullable=False),
)

plans = sa.Table(
    "plans",
    metadata,
    sa.Column("plan_id", sa.String, primary_key=True),
    sa.Column("environment", sa.String, nullable=False),
    sa.Column("created_at", sa.String, nullable=False),
    sa.Column("prepared_at", sa.String, nullable=True),
    sa.Column("plan_json", sa.Text, nullable=False),
    sa.Index("plans_environment_idx", "environment"),
)
