"""Table write locks: at most one interval write at a time into a physical table (architecture invariant 7).

A time-range model's table is a period table (``engine.period_tables``): an interval write plans its segments from
the segments the physical view names, writes the new ones and switches the view. Two runs writing different days
of the same month at once would plan from the same view, and the later switch would retire the other's segment
while both record their intervals. So each interval write holds the table's lock, taken like a promotion lease: an
insert (the primary key makes a second insert a conflict), given back by deleting the row with its token.

A lock is taken over when its holder cannot be writing any more: it expired (its holder renews it while it
writes: ``StateStore.table_write_lock``), or its holder's process on this host is gone (a SIGKILLed run).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import sqlalchemy as sa

from dagster_sparkmesh.state.leases import process_alive
from dagster_sparkmesh.state.records import LeaseHolder
from dagster_sparkmesh.state.schema import table_write_locks as table
from dagster_sparkmesh.state.timestamps import from_text, to_text

WRITE_LOCK_DURATION = timedelta(minutes=5)
"""How long a lock holds without renewal; its holder renews it every fifth of that while it writes."""


def try_acquire(connection: sa.Connection, table_name: str, holder: LeaseHolder, now: datetime) -> str | None:
    """The lock's token if this call took it (free, expired, or held by a dead process of this host), else None."""
    token = uuid.uuid4().hex
    values = {
        "holder_json": holder.model_dump_json(),
        "token": token,
        "acquired_at": to_text(now),
        "expires_at": to_text(now + WRITE_LOCK_DURATION),
    }
    savepoint = connection.begin_nested()
    try:
        connection.execute(sa.insert(table).values(table_name=table_name, **values))
    except sa.exc.IntegrityError:
        savepoint.rollback()
    else:
        savepoint.commit()
        return token
    held = connection.execute(
        sa.select(table).where(table.c.table_name == table_name).with_for_update()
    ).one_or_none()
    if held is not None and not _abandoned(held, holder, now):
        return None
    connection.execute(sa.delete(table).where(table.c.table_name == table_name))
    connection.execute(sa.insert(table).values(table_name=table_name, **values))
    return token


def _abandoned(held, asking: LeaseHolder, now: datetime) -> bool:
    if from_text(held.expires_at) <= now:
        return True
    holder = LeaseHolder.model_validate_json(held.holder_json)
    return holder.host == asking.host and not process_alive(holder.pid)


def renew(connection: sa.Connection, table_name: str, token: str, now: datetime) -> bool:
    """Extend the lock; False if it was taken over meanwhile (the holder was thought dead)."""
    result = connection.execute(
        sa.update(table)
        .where(table.c.table_name == table_name, table.c.token == token)
        .values(expires_at=to_text(now + WRITE_LOCK_DURATION))
    )
    return result.rowcount == 1


def release(connection: sa.Connection, table_name: str, token: str) -> None:
    """Give the lock back; a no-op if it was taken over meanwhile."""
    connection.execute(sa.delete(table).where(table.c.table_name == table_name, table.c.token == token))


def holder_of(connection: sa.Connection, table_name: str) -> LeaseHolder | None:
    row = connection.execute(sa.select(table).where(table.c.table_name == table_name)).one_or_none()
    return None if row is None else LeaseHolder.model_validate_json(row.holder_json)
