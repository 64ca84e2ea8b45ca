"""Promotion leases: at most one promotion of an environment swaps its views at a time (architecture invariant 7).

The environment record's plan-id check alone decides only who swaps the *record*; two promotions that both pass
the first check would interleave their ``ALTER VIEW``s and leave the views a mix of both plans. So a promotion
first takes the environment's lease (an insert: the primary key turns a second insert into a conflict) and gives it
back in the same transaction that swaps the record, or when it fails.

A lease can be taken over, since a killed promotion never gives it back:
- by the same plan (running a plan again resumes it);
- by anyone once it expired (``LEASE_DURATION`` after it was taken or last renewed);
- by anyone on the holder's host once the holder's process is gone (a SIGKILLed ``sparkmesh plan`` re-run at once).
A take-over gets a new token, so a holder that was only slow can no longer swap the record.
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timedelta

import sqlalchemy as sa

from dagster_sparkmesh.errors import StateConflictError
from dagster_sparkmesh.state.records import LeaseHolder, PromotionLease
from dagster_sparkmesh.state.schema import promotion_leases as table
from dagster_sparkmesh.state.timestamps import from_text, to_text

LEASE_DURATION = timedelta(minutes=10)
"""Long enough for hundreds of view swaps between renewals; short enough that a crashed remote holder (a Dagster
run worker on another machine) blocks its environment for minutes, not forever."""


def get(connection: sa.Connection, environment: str, *, lock: bool = False) -> PromotionLease | None:
    query = sa.select(table).where(table.c.environment == environment)
    row = connection.execute(query.with_for_update() if lock else query).one_or_none()
    if row is None:
        return None
    return PromotionLease(
        environment=row.environment,
        plan_id=row.plan_id,
        holder=LeaseHolder.model_validate_json(row.holder_json),
        token=row.token,
        acquired_at=from_text(row.acquired_at),
        expires_at=from_text(row.expires_at),
        views_touched=bool(row.views_touched),
    )


def _values(lease: PromotionLease) -> dict:
    return {
        "plan_id": lease.plan_id,
        "holder": lease.holder.description,
        "holder_json": lease.holder.model_dump_json(),
        "token": lease.token,
        "acquired_at": to_text(lease.acquired_at),
        "expires_at": to_text(lease.expires_at),
        "views_touched": lease.views_touched,
    }


def acquire(
    connection: sa.Connection, environment: str, plan_id: str, holder: LeaseHolder, now: datetime
) -> PromotionLease:
    """Take the environment's lease, or raise ``StateConflictError`` naming the plan that holds it."""
    lease = PromotionLease(
        environment=environment,
        plan_id=plan_id,
        holder=holder,
        token=uuid.uuid4().hex,
        acquired_at=now,
        expires_at=now + LEASE_DURATION,
    )
    if _try_insert(connection, lease):
        return lease
    held = get(connection, environment, lock=True)
    if held is None:  # given back between our insert and our read (PostgreSQL): the key is free again
        if _try_insert(connection, lease):
            return lease
        held = get(connection, environment, lock=True)
    if held is None or not _may_take_over(held, lease, now):
        raise _held_by(held, environment)
    # Whoever held it may have swapped some views: keep the flag so that this promotion re-points all of them.
    taken = lease.model_copy(update={
        "views_touched": held.views_touched,
        "interrupted_plan_id": held.plan_id if held.views_touched else None,
    })
    _replace(connection, held, taken)
    return taken


def _try_insert(connection: sa.Connection, lease: PromotionLease) -> bool:
    savepoint = connection.begin_nested()
    try:
        connection.execute(sa.insert(table).values(environment=lease.environment, **_values(lease)))
    except sa.exc.IntegrityError:
        savepoint.rollback()
        return False
    savepoint.commit()
    return True


def _may_take_over(held: PromotionLease, wanted: PromotionLease, now: datetime) -> bool:
    if held.plan_id == wanted.plan_id or held.expires_at <= now:
        return True
    return held.holder.host == wanted.holder.host and not process_alive(held.holder.pid)


def abandoned(lease: PromotionLease, now: datetime) -> bool:
    """Nobody is promoting under this lease any more: it expired, or its holder on this host is gone."""
    if lease.expires_at <= now:
        return True
    return lease.holder.host == LeaseHolder.current().host and not process_alive(lease.holder.pid)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def _replace(connection: sa.Connection, held: PromotionLease, lease: PromotionLease) -> None:
    result = connection.execute(
        sa.update(table)
        .where(table.c.environment == held.environment, table.c.token == held.token)
        .values(**_values(lease))
    )
    if result.rowcount != 1:  # the row was locked above: only a bug gets here
        raise _held_by(get(connection, held.environment), held.environment)


def renew(connection: sa.Connection, lease: PromotionLease, now: datetime, *, views_touched: bool) -> PromotionLease:
    """Extend the lease (and record that views are being swapped); raise if another promotion took it over."""
    renewed = lease.model_copy(update={"expires_at": now + LEASE_DURATION, "views_touched": views_touched})
    _update_own(connection, lease, **_values(renewed))
    return renewed


def release(connection: sa.Connection, lease: PromotionLease, now: datetime) -> None:
    """Give the lease back after a failure; a no-op if it was taken over meanwhile.

    When views were touched, the row stays as an already expired lease: the next promotion, whichever plan it
    comes from, takes it at once and learns that the views may not match the environment record.
    """
    own = sa.and_(table.c.environment == lease.environment, table.c.token == lease.token)
    if lease.views_touched:
        connection.execute(sa.update(table).where(own).values(expires_at=to_text(now)))
    else:
        connection.execute(sa.delete(table).where(own))


def release_with_swap(connection: sa.Connection, lease: PromotionLease) -> None:
    """Delete the lease inside the transaction that swaps the environment record; raise if it is no longer ours."""
    result = connection.execute(
        sa.delete(table).where(table.c.environment == lease.environment, table.c.token == lease.token)
    )
    if result.rowcount != 1:
        raise _lost(connection, lease)


def delete_expired(connection: sa.Connection, environment: str, now: datetime) -> None:
    connection.execute(
        sa.delete(table).where(table.c.environment == environment, table.c.expires_at <= to_text(now))
    )


def _update_own(connection: sa.Connection, lease: PromotionLease, **values) -> None:
    result = connection.execute(
        sa.update(table)
        .where(table.c.environment == lease.environment, table.c.token == lease.token)
        .values(**values)
    )
    if result.rowcount != 1:
        raise _lost(connection, lease)


def _held_by(held: PromotionLease | None, environment: str) -> StateConflictError:
    if held is None:
        return StateConflictError(f"could not take the promotion lease of environment {environment}; try again")
    return StateConflictError(
        f"environment {environment} is being promoted by plan {held.plan_id} ({held.holder.description}) since "
        f"{held.acquired_at:%Y-%m-%d %H:%M:%S} UTC; its lease expires at {held.expires_at:%Y-%m-%d %H:%M:%S} UTC",
        hint="no view was changed: wait for that promotion to finish, then plan again (this plan may be superseded)",
    )


def _lost(connection: sa.Connection, lease: PromotionLease) -> StateConflictError:
    holder = get(connection, lease.environment)
    taken = f"plan {holder.plan_id} ({holder.holder.description}) took it over" if holder else "it was given back"
    return StateConflictError(
        f"plan {lease.plan_id} lost the promotion lease of environment {lease.environment} "
        f"(valid until {lease.expires_at:%Y-%m-%d %H:%M:%S} UTC): {taken}",
        hint="the other promotion now owns the views; plan again once it finished",
    )
