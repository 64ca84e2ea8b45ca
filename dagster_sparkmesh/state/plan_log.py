"""The plan-application log: one row per attempt to apply a plan, closed when the attempt ends.

A row left without an end tells a later reader that an application crashed or is still running.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from dagster_sparkmesh.errors import StateError
from dagster_sparkmesh.state.records import PlanApplication
from dagster_sparkmesh.state.schema import plan_applications as table
from dagster_sparkmesh.state.timestamps import from_text, optional_from_text, to_text


def start(
    connection: sa.Connection, plan_id: str, environment: str, user: str, host: str, summary_json: str, now: datetime
) -> None:
    connection.execute(
        sa.insert(table).values(
            plan_id=plan_id,
            environment=environment,
            user_name=user,
            host=host,
            summary_json=summary_json,
            started_at=to_text(now),
        )
    )


def end(connection: sa.Connection, plan_id: str, outcome: str, metrics_json: str, now: datetime) -> None:
    """Close the latest open attempt of ``plan_id``."""
    open_attempt = (
        sa.select(sa.func.max(table.c.id))
        .where(table.c.plan_id == plan_id, table.c.ended_at.is_(None))
        .scalar_subquery()
    )
    result = connection.execute(
        sa.update(table)
        .where(table.c.id == open_attempt)
        .values(ended_at=to_text(now), outcome=outcome, metrics_json=metrics_json)
    )
    if result.rowcount != 1:
        raise StateError(
            f"no running application of plan {plan_id} to end",
            hint="record_plan_start must be called before record_plan_end",
        )


def list_all(connection: sa.Connection) -> list[PlanApplication]:
    rows = connection.execute(sa.select(table).order_by(table.c.id))
    return [
        PlanApplication(
            plan_id=row.plan_id,
            environment=row.environment,
            user=row.user_name,
            host=row.host,
            summary_json=row.summary_json,
            started_at=from_text(row.started_at),
            ended_at=optional_from_text(row.ended_at),
            outcome=row.outcome,
            metrics_json=row.metrics_json,
        )
        for row in rows
    ]
