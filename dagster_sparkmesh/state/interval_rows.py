"""Interval rows keyed by (model name, version).

Writers only append rows, so two runs recording different intervals at the same time never overwrite each
other; merging happens on read. Rewrites (removal, compaction) delete exactly the rows they read, by id, so a
row another writer appends meanwhile survives.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa

from dagster_sparkmesh.errors import StateError
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.snapshot import intervals as math
from dagster_sparkmesh.state.schema import intervals as table
from dagster_sparkmesh.state.timestamps import from_text, to_text

_LOCK_NAMESPACE = 7364252


def _checked(name: str, version: str, interval: Interval) -> Interval:
    interval = math.normalize(interval)
    if interval.start >= interval.end:
        raise StateError(
            f"cannot record the empty interval [{interval.start}, {interval.end}) of {name} (version {version})",
            hint="an interval's start must be before its end",
        )
    return interval


def append(connection: sa.Connection, name: str, version: str, intervals: Iterable[Interval], now: datetime) -> None:
    checked = [_checked(name, version, interval) for interval in intervals]
    rows = [
        {"name": name, "version": version, "start_ts": to_text(i.start), "end_ts": to_text(i.end)} for i in checked
    ]
    if rows:
        connection.execute(sa.insert(table).values(created_at=to_text(now)), rows)


def _read_rows(connection: sa.Connection, name: str, version: str) -> list[tuple[int, Interval]]:
    query = sa.select(table.c.id, table.c.start_ts, table.c.end_ts).where(
        table.c.name == name, table.c.version == version
    )
    return [
        (row_id, Interval(start=from_text(start), end=from_text(end)))
        for row_id, start, end in connection.execute(query)
    ]


def read(connection: sa.Connection, name: str, version: str) -> list[Interval]:
    return math.merge(interval for _, interval in _read_rows(connection, name, version))


def _lock_for_rewrite(connection: sa.Connection, name: str, version: str) -> None:
    # Two rewrites of the same (name, version) must not both compute from the rows as they were before either
    # committed, or the second would put back what the first removed. SQLite's IMMEDIATE transaction already
    # serializes them; PostgreSQL needs a lock taken before the rows are read.
    if connection.dialect.name == "postgresql":
        key = sa.func.hashtext(f"{name}@{version}")
        connection.execute(sa.select(sa.func.pg_advisory_xact_lock(_LOCK_NAMESPACE, key)))


def remove(connection: sa.Connection, name: str, version: str, removed: Interval, now: datetime) -> None:
    """Subtract ``removed``, splitting rows that straddle it; also leaves the remaining rows compacted."""
    _lock_for_rewrite(connection, name, version)
    rows = _read_rows(connection, name, version)
    remaining = math.remove_range((interval for _, interval in rows), math.normalize(removed))
    _replace(connection, name, version, [row_id for row_id, _ in rows], remaining, now)


def compact(connection: sa.Connection, name: str, version: str, now: datetime) -> None:
    _lock_for_rewrite(connection, name, version)
    rows = _read_rows(connection, name, version)
    merged = math.merge(interval for _, interval in rows)
    if len(merged) < len(rows):
        _replace(connection, name, version, [row_id for row_id, _ in rows], merged, now)


def _replace(
    connection: sa.Connection, name: str, version: str, row_ids: list[int], intervals: list[Interval], now: datetime
) -> None:
    for start in range(0, len(row_ids), 400):
        connection.execute(sa.delete(table).where(table.c.id.in_(row_ids[start : start + 400])))
    append(connection, name, version, intervals, now)


def delete_version(connection: sa.Connection, name: str, version: str) -> None:
    connection.execute(sa.delete(table).where(table.c.name == name, table.c.version == version))
