"""The stages of a plan, in the order they are applied: what applying it takes, as values.

``execution.plan_evaluator`` visits them, for the CLI and for Dagster alike: a CLI ``plan`` visits every stage; a
Dagster step visits the backfill stage narrowed to its partition window (``plan.ranged``); the promotion asset
visits the promotion. Preparing (snapshots pushed, restated intervals forgotten) happens once per plan whoever
visits it first, so any entry point may start with it.
"""

from __future__ import annotations

from typing import Literal

from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.records import Interval


class BeforeAll(Record):
    """The project's ``before_all`` statements (once per evaluation)."""

    stage: Literal["before_all"] = "before_all"


class CreateSnapshots(Record):
    """Push the plan's new snapshots and forget its restated intervals, once per plan (``StateStore.prepare_plan``)."""

    stage: Literal["create_snapshots"] = "create_snapshots"
    restatements: tuple[tuple[str, str, Interval], ...] = ()
    """(model, version, range) whose recorded intervals are removed, then computed again as missing."""


class Backfill(Record):
    """Compute these models' intervals in DAG order (audits run after each batch); ``models``: the selection,
    where a model with nothing to compute is reported up to date."""

    stage: Literal["backfill"] = "backfill"
    intervals: dict[str, tuple[Interval, ...]] = {}
    models: tuple[str, ...] | None = None
    """None: every model of the plan's environment."""


class StandaloneAudits(Record):
    """Run these standalone audits over the plan's tables (``execution.standalone_audits``): after the backfill and
    before the promotion, so a blocking failure leaves every view as it was."""

    stage: Literal["standalone_audits"] = "standalone_audits"
    names: tuple[str, ...] = ()


class Promote(Record):
    """Verify every interval and physical table, swap the views, swap the environment record, then run the
    models' ``on_virtual_update`` statements."""

    stage: Literal["promote"] = "promote"


class AfterAll(Record):
    """The project's ``after_all`` statements."""

    stage: Literal["after_all"] = "after_all"


Stage = BeforeAll | CreateSnapshots | Backfill | StandaloneAudits | Promote | AfterAll


def plan_stages(plan: Plan, *, promote: bool = True) -> tuple[Stage, ...]:
    """Every stage of applying ``plan``; without ``promote`` the environment is left as it is (``sparkmesh run``)."""
    stages: list[Stage] = [BeforeAll(), create_snapshots(plan), Backfill(intervals=plan.missing_intervals)]
    stages += standalone_audit_stages(plan)
    if promote:
        stages.append(Promote())
    stages.append(AfterAll())
    return tuple(stages)


def standalone_audit_stages(plan: Plan) -> tuple[StandaloneAudits, ...]:
    """The plan's standalone audits as a stage, or none when it runs none (``Plan.standalone_audits``)."""
    return (StandaloneAudits(names=plan.standalone_audits),) if plan.standalone_audits else ()


def create_snapshots(plan: Plan) -> CreateSnapshots:
    versions = {s.name: s.version for s in plan.environment_after.snapshots}
    restated = tuple((name, versions[name], interval) for name, interval in plan.restatements.items())
    return CreateSnapshots(restatements=restated)
