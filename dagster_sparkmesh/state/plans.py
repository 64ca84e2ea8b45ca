"""Stored plans: each plan kept whole as JSON under its id, and whether it was prepared.

Preparing a plan (its snapshots pushed, its restated intervals removed) happens once: the first caller claims it in
the same transaction that does the work, so two Dagster steps of one run never restate twice (a second removal
would forget what the first step already recomputed).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa

from dagster_sparkmesh.snapshot.records import Interval, Snapshot
from dagster_sparkmesh.state import interval_rows, snapshots
from dagster_sparkmesh.state.records import StoredPlan
from dagster_sparkmesh.state.schema import plans as table
from dagster_sparkmesh.state.timestamps import from_text, optional_from_text, to_text

Restatement = tuple[str, str, Interval]
"""(model, version, range) whose recorded intervals a plan removes."""


def save(connection: sa.Connection, plan_id: str, environment: str, plan_json: str, now: datetime) -> bool:
    """Store the plan unless a plan with this id is stored already (then the stored one stays); True if stored."""
    exists = connection.execute(sa.select(table.c.plan_id).where(table.c.plan_id == plan_id)).first()
    if exists:
        return False
    connection.execute(
        sa.insert(table).values(plan_id=plan_id, environment=environment, created_at=to_text(now), plan_json=plan_json)
    )
    return True


def get(connection: sa.Connection, plan_id: str) -> StoredPlan | None:
    row = connection.execute(sa.select(table).where(table.c.plan_id == plan_id)).first()
    return _record(row) if row else None


def latest(connection: sa.Connection, environment: str) -> StoredPlan | None:
    """The environment's most recently stored plan."""
    query = sa.select(table).where(table.c.environment == environment).order_by(table.c.created_at.desc()).limit(1)
    row = connection.execute(query).first()
    return _record(row) if row else None


def prepare(
    connection: sa.Connection,
    plan_id: str,
    new_snapshots: Iterable[Snapshot],
    restatements: Iterable[Restatement],
    now: datetime,
) -> bool:
    """Push the snapshots and remove the restated intervals, unless done already; True if this call did it."""
    claimed = connection.execute(
        sa.update(table).where(table.c.plan_id == plan_id, table.c.prepared_at.is_(None)).values(prepared_at=to_text(now))
    )
    if claimed.rowcount != 1:
        return False
    snapshots.push(connection, new_snapshots)
    for name, version, interval in restatements:
        interval_rows.remove(connection, name, version, interval, now)
    return True


def delete_older_than(connection: sa.Connection, before: datetime, keep: Iterable[str]) -> int:
    """Forget plans created before ``before``, except ``keep`` (the plans environments were promoted with)."""
    kept = list(keep)
    result = connection.execute(
        sa.delete(table).where(table.c.created_at < to_text(before), table.c.plan_id.not_in(kept))
    )
    return result.rowcount


def _record(row: sa.Row) -> StoredPlan:
    return StoredPlan(
        plan_id=row.plan_id,
        environment=row.environment,
        created_at=from_text(row.created_at),
        prepared_at=optional_from_text(row.prepared_at),
        plan_json=row.plan_json,
    )
