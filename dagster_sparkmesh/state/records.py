"""Records that only the state store produces: the plan-application log, the schema's version stamp and the
promotion leases."""

from __future__ import annotations

import getpass
import os
import socket
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


class LeaseHolder(Record):
    """Who asks for a promotion lease: enough to name them in a conflict and to tell a crashed local holder."""

    user: str
    host: str
    pid: int

    @classmethod
    def current(cls) -> LeaseHolder:
        return cls(user=getpass.getuser(), host=socket.gethostname(), pid=os.getpid())

    @property
    def description(self) -> str:
        return f"{self.user}@{self.host} pid {self.pid}"


class PromotionLease(Record):
    """The right to swap an environment's views, held by one promotion until it swaps the record or fails."""

    environment: str
    plan_id: str
    holder: LeaseHolder
    token: str
    """Identifies this acquisition: a take-over gets a new token, so the previous holder can no longer commit."""
    acquired_at: datetime
    expires_at: datetime
    views_touched: bool = False
    """A holder started swapping views and did not finish: the views may differ from the environment record."""
    interrupted_plan_id: str | None = None
    """When taken over from a holder that touched views: that holder's plan, whose views may exist (not stored)."""


class StoredPlan(Record):
    """A plan as the state store keeps it: its JSON (``plan.stored`` turns it back into a Plan) and whether its
    snapshots were pushed and restatements applied."""

    plan_id: str
    environment: str
    created_at: datetime
    prepared_at: datetime | None = None
    plan_json: str
