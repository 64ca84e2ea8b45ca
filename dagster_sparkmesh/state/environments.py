"""Environment rows and their history, with the optimistic plan-id check that makes promotions race-safe.

A promotion states which plan the environment had when the plan was built (``expected_plan_id``). The swap
happens only if that is still true, inside one transaction that also keeps the replaced record for rollback.
The current row is locked before it is compared (PostgreSQL ``FOR UPDATE``; SQLite's IMMEDIATE transaction
already holds the database's write lock), and the update repeats the check in its ``WHERE`` clause.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlalchemy as sa

from dagster_sparkmesh.errors import StateConflictError
from dagster_sparkmesh.snapshot.records import Environment
from dagster_sparkmesh.state.schema import environment_history as history
from dagster_sparkmesh.state.schema import environments as table
from dagster_sparkmesh.state.timestamps import optional_to_text, to_text


def _row(environment: Environment) -> dict:
    return {
        "plan_id": environment.plan_id,
        "promoted_at": to_text(environment.promoted_at),
        "expires_at": optional_to_text(environment.expires_at),
        "environment_json": environment.model_dump_json(),
    }


def get(connection: sa.Connection, name: str, *, lock: bool = False) -> Environment | None:
    query = sa.select(table.c.environment_json).where(table.c.name == name)
    text = connection.execute(query.with_for_update() if lock else query).scalar_one_or_none()
    return None if text is None else Environment.model_validate_json(text)


def list_all(connection: sa.Connection) -> list[Environment]:
    rows = connection.execute(sa.select(table.c.environment_json).order_by(table.c.name)).scalars()
    return [Environment.model_validate_json(text) for text in rows]


def _conflict(name: str, stored: str | None, expected: str | None) -> StateConflictError:
    built = f"built from plan {expected}" if expected else f"built when {name} did not exist yet"
    promoted = f"was promoted by plan {stored}" if stored else "was deleted"
    return StateConflictError(
        f"environment {name} {promoted} after this plan was {built}: re-plan",
        hint="another plan changed the environment meanwhile; build the plan again against its current state",
    )


def promote(connection: sa.Connection, environment: Environment, expected_plan_id: str | None, now: datetime) -> None:
    current = get(connection, environment.name, lock=True)
    if current is None:
        if expected_plan_id is not None:
            raise _conflict(environment.name, None, expected_plan_id)
        _insert(connection, environment, expected_plan_id)
    elif current.plan_id == environment.plan_id:
        # Promoting the same plan again (a retry after the views were re-verified) is not a conflict.
        _update(connection, environment, current.plan_id, expected_plan_id)
    elif current.plan_id != expected_plan_id:
        raise _conflict(environment.name, current.plan_id, expected_plan_id)
    else:
        _keep_in_history(connection, current, now)
        _update(connection, environment, current.plan_id, expected_plan_id)


def _insert(connection: sa.Connection, environment: Environment, expected_plan_id: str | None) -> None:
    # On PostgreSQL two first promotions both find no row; the unique key makes the second insert fail.
    savepoint = connection.begin_nested()
    try:
        connection.execute(sa.insert(table).values(name=environment.name, **_row(environment)))
    except sa.exc.IntegrityError:
        savepoint.rollback()
        winner = get(connection, environment.name)
        raise _conflict(environment.name, winner.plan_id if winner else None, expected_plan_id) from None
    savepoint.commit()


def _update(connection: sa.Connection, environment: Environment, stored: str, expected: str | None) -> None:
    result = connection.execute(
        sa.update(table).where(table.c.name == environment.name, table.c.plan_id == stored).values(**_row(environment))
    )
    if result.rowcount != 1:
        winner = get(connection, environment.name)
        raise _conflict(environment.name, winner.plan_id if winner else None, expected)


def _keep_in_history(connection: sa.Connection, environment: Environment, now: datetime) -> None:
    connection.execute(
        sa.insert(history).values(
            name=environment.name,
            plan_id=environment.plan_id,
            replaced_at=to_text(now),
            environment_json=environment.model_dump_json(),
        )
    )


def get_history(connection: sa.Connection, name: str) -> list[Environment]:
    query = sa.select(history.c.environment_json).where(history.c.name == name).order_by(history.c.id.desc())
    return [Environment.model_validate_json(text) for text in connection.execute(query).scalars()]


def delete(connection: sa.Connection, name: str, now: datetime) -> bool:
    """Remove the environment, keeping its last record in the history; False if it did not exist."""
    current = get(connection, name, lock=True)
    if current is None:
        return False
    _keep_in_history(connection, current, now)
    connection.execute(sa.delete(table).where(table.c.name == name))
    return True


def invalidate(connection: sa.Connection, name: str, now: datetime) -> bool:
    """Mark the environment expired now (the janitor removes it later); False if it did not exist."""
    current = get(connection, name, lock=True)
    if current is None:
        return False
    _rewrite(connection, current.model_copy(update={"expires_at": now}))
    return True


def extend(connection: sa.Connection, name: str, ttl: timedelta, now: datetime) -> bool:
    """Move a live environment's expiry to ``now + ttl`` once less than half of ``ttl`` is left (one write per half
    TTL, not per call); an expired one is left to the janitor. True when it was moved."""
    current = get(connection, name, lock=True)
    expires = current.expires_at if current is not None else None
    if expires is None or expires <= now or expires >= now + ttl / 2:
        return False
    _rewrite(connection, current.model_copy(update={"expires_at": now + ttl}))
    return True


def _rewrite(connection: sa.Connection, environment: Environment) -> None:
    """The environment's row replaced in place (no history kept: its promotion did not change)."""
    connection.execute(sa.update(table).where(table.c.name == environment.name).values(**_row(environment)))
