"""What a FULL model's last write read: a digest of its rendered query and of its inputs' content tokens.

A FULL model is recomputed whole each time its cron is due. When nothing it reads has changed since its last
write (``execution.unchanged_inputs`` decides what "nothing" means, and when it cannot be known), recomputing
would write the same rows again; the digest recorded here after each write lets the next run keep the table.
A missing row means "unknown": the table is recomputed.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from dagster_sparkmesh.state.schema import write_inputs as table
from dagster_sparkmesh.state.timestamps import to_text


def digest_of(connection: sa.Connection, table_name: str) -> str | None:
    row = connection.execute(sa.select(table.c.digest).where(table.c.table_name == table_name)).one_or_none()
    return None if row is None else row.digest


def record(connection: sa.Connection, table_name: str, digest: str | None, now: datetime) -> None:
    """Replace the table's digest; None forgets it (the next write of the table recomputes)."""
    connection.execute(sa.delete(table).where(table.c.table_name == table_name))
    if digest is not None:
        connection.execute(sa.insert(table).values(table_name=table_name, digest=digest, written_at=to_text(now)))
