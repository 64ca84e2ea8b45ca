"""When a run of prod last looked for each model version's scheduled restatements (``plan.auto_restatements``).

The next run restates a model whose ``auto_restatement_cron`` ticked since then. A version no run looked at yet has
no row: its snapshot's creation time stands in, as SQLMesh counts from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa

from dagster_sparkmesh.state.schema import restatement_looks as table
from dagster_sparkmesh.state.timestamps import from_text, to_text


def looks(connection: sa.Connection, versions: Iterable[tuple[str, str]]) -> dict[tuple[str, str], datetime]:
    wanted = set(versions)
    names = {name for name, _ in wanted}
    rows = connection.execute(sa.select(table).where(table.c.name.in_(names))) if names else []
    return {(row.name, row.version): from_text(row.looked_at) for row in rows if (row.name, row.version) in wanted}


def record(connection: sa.Connection, versions: Iterable[tuple[str, str]], looked_at: datetime) -> None:
    for name, version in set(versions):
        key = (table.c.name == name) & (table.c.version == version)
        connection.execute(sa.delete(table).where(key))
        connection.execute(sa.insert(table).values(name=name, version=version, looked_at=to_text(looked_at)))
