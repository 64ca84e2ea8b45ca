"""Snapshot rows: the whole record as JSON, keyed by (name, fingerprint)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from dagster_sparkmesh.snapshot.records import Snapshot, SnapshotId
from dagster_sparkmesh.state.schema import snapshots as table
from dagster_sparkmesh.state.timestamps import to_text

# Keeps every statement well under SQLite's bound-parameter limit.
_CHUNK = 400


def _row(snapshot: Snapshot) -> dict:
    return {
        "name": snapshot.name,
        "fingerprint": snapshot.fingerprint,
        "version": snapshot.version,
        "kind_name": snapshot.kind_name,
        "created_at": to_text(snapshot.created_at),
        "snapshot_json": snapshot.model_dump_json(),
    }


def _upsert(dialect_name: str):
    # Another process may push the same snapshot at the same time: both succeed, the first one's version wins.
    # A snapshot pushed again with the same version carries new metadata: the record keeps the latest metadata.
    insert = (postgresql.insert if dialect_name == "postgresql" else sqlite.insert)(table)
    return insert.on_conflict_do_update(
        index_elements=["name", "fingerprint"],
        set_={"snapshot_json": insert.excluded.snapshot_json},
        where=table.c.version == insert.excluded.version,
    )


def push(connection: sa.Connection, snapshots: Iterable[Snapshot]) -> None:
    rows = [_row(snapshot) for snapshot in snapshots]
    for start in range(0, len(rows), _CHUNK):
        connection.execute(_upsert(connection.dialect.name), rows[start : start + _CHUNK])


def _chunks(ids: Iterable[SnapshotId]) -> Iterator[list[SnapshotId]]:
    ids = list(dict.fromkeys(ids))
    for start in range(0, len(ids), _CHUNK):
        yield ids[start : start + _CHUNK]


def _where_ids(ids: list[SnapshotId]):
    return sa.tuple_(table.c.name, table.c.fingerprint).in_([(i.name, i.fingerprint) for i in ids])


def get(connection: sa.Connection, ids: Iterable[SnapshotId]) -> dict[SnapshotId, Snapshot]:
    found: dict[SnapshotId, Snapshot] = {}
    for chunk in _chunks(ids):
        for (text,) in connection.execute(sa.select(table.c.snapshot_json).where(_where_ids(chunk))):
            snapshot = Snapshot.model_validate_json(text)
            found[snapshot.id] = snapshot
    return found


def _ordered(query: sa.Select) -> sa.Select:
    return query.order_by(table.c.created_at, table.c.name, table.c.fingerprint)


def get_by_name(connection: sa.Connection, names: Iterable[str]) -> list[Snapshot]:
    names = list(dict.fromkeys(names))
    rows: list[sa.Row] = []
    for start in range(0, len(names), _CHUNK):
        query = sa.select(table.c.created_at, table.c.name, table.c.fingerprint, table.c.snapshot_json)
        rows.extend(connection.execute(query.where(table.c.name.in_(names[start : start + _CHUNK]))))
    rows.sort(key=lambda row: (row.created_at, row.name, row.fingerprint))
    return [Snapshot.model_validate_json(row.snapshot_json) for row in rows]


def get_all(connection: sa.Connection) -> list[Snapshot]:
    rows = connection.execute(_ordered(sa.select(table.c.snapshot_json))).scalars()
    return [Snapshot.model_validate_json(text) for text in rows]


def delete(connection: sa.Connection, ids: Iterable[SnapshotId]) -> None:
    for chunk in _chunks(ids):
        connection.execute(sa.delete(table).where(_where_ids(chunk)))
