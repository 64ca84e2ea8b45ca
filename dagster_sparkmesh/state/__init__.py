"""The state store: snapshots, environments, intervals (SQLAlchemy; SQLite by default, PostgreSQL for teams)."""

from __future__ import annotations

from dagster_sparkmesh.state.reader import StateReader
from dagster_sparkmesh.state.records import LeaseHolder, PlanApplication, PromotionLease, VersionStamp
from dagster_sparkmesh.state.store import StateStore, default_state_url, open_state_store

__all__ = [
    "LeaseHolder",
    "PlanApplication",
    "PromotionLease",
    "StateReader",
    "StateStore",
    "VersionStamp",
    "default_state_url",
    "open_state_store",
]
