"""Records that only the state store produces: the plan-application log and the schema's version stamp."""

from __future__ import annotations

from datetime import datetime

from dagster_sparkmesh.records import Record


class PlanApplication(Record):
    """One attempt to apply a plan: who, where, when, and how it ended (None while running or after a crash)."""

    plan_id: str
    environment: str
    user: str
    host: str
    summary_json: str
    started_at: datetime
    ended_at: datetime | None = None
    outcome: str | None = None
    metrics_json: str | None = None


class VersionStamp(Record):
    """What the ``_versions`` table says about the code that last migrated or stamped the state."""

    schema_version: int
    sqlglot_version: str
    package_version: str
    updated_at: datetime
