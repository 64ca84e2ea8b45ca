"""Rollback is a plan like any other: its environment is the previous record again, with nothing to compute."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.snapshot.records import Environment


def rollback_plan(current: Environment, previous: Environment, *, now: datetime, ttl: timedelta | None) -> Plan:
    """A plan whose result is ``previous`` again: only views and the environment record to swap."""
    plan_id = uuid.uuid4().hex
    after = previous.model_copy(
        update={
            "plan_id": plan_id,
            "previous_plan_id": current.plan_id,
            "promoted_at": now,
            "expires_at": now + ttl if ttl is not None else None,
        }
    )
    return Plan(
        plan_id=plan_id,
        environment=current.name,
        previous_plan_id=current.plan_id,
        base_environment=current.name,
        start=previous.start,
        end=previous.end or now,
        execution_time=now,
        environment_after=after,
    )
