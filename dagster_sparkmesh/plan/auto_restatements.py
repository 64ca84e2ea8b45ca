"""Scheduled restatements (SQLMesh's ``auto_restatement_cron``): which models a run of prod restates. Pure.

A model whose kind sets ``auto_restatement_cron`` is restated by the first run of prod at or after each tick of that
cron since the last run that looked (or, the first time, since its version was planned): its latest
``auto_restatement_intervals`` intervals before the run's execution time, floored to its interval unit, or without
that number everything it has recorded. Late rows of those intervals reach the table that way. Its readers follow as
for any restatement (``plan.restatements``); a kind that disables restatement, or a model that recorded nothing yet,
is not restated (the tick passes). As in SQLMesh, only ``run`` against prod restates on a schedule, never a plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.plan.intervals import Schedule, interval_cron
from dagster_sparkmesh.snapshot.records import Interval, Snapshot


def restates_on_schedule(model: Model) -> bool:
    return bool(getattr(model.kind, "auto_restatement_cron", None))


def next_tick(model: Model, after: datetime) -> datetime:
    """The first tick of the model's ``auto_restatement_cron`` after ``after`` (UTC, as SQLMesh reads it)."""
    return Schedule.of(model.kind.auto_restatement_cron).next(after)  # type: ignore[attr-defined]


def scheduled_restatements(
    models: Mapping[str, Model],
    recorded: Mapping[str, list[Interval]],
    looks: Mapping[tuple[str, str], datetime],
    snapshots: Iterable[Snapshot],
    execution_time: datetime,
) -> dict[str, Interval]:
    """``due_restatements`` for a run of prod: ``looks`` per (model, version); a version no run looked at counts
    from its snapshot's creation."""
    looked = {s.name: looks.get((s.name, s.version), s.created_at) for s in snapshots}
    return due_restatements(models, recorded, looked, execution_time)


def due_restatements(
    models: Mapping[str, Model],
    recorded: Mapping[str, list[Interval]],
    looked_last: Mapping[str, datetime],
    execution_time: datetime,
) -> dict[str, Interval]:
    """Model → the range a run at ``execution_time`` restates, for the models whose cron ticked after
    ``looked_last`` (the last run that looked, else the version's creation) and that recorded something."""
    due: dict[str, Interval] = {}
    for name, model in models.items():
        held = recorded.get(name)
        if not restates_on_schedule(model) or not held or getattr(model.kind, "disable_restatement", False):
            continue
        if name in looked_last and next_tick(model, looked_last[name]) <= execution_time:
            due[name] = _restated_range(model, held, execution_time)
    return due


def _restated_range(model: Model, held: list[Interval], execution_time: datetime) -> Interval:
    count = getattr(model.kind, "auto_restatement_intervals", None)
    if count is None:
        return Interval(start=min(i.start for i in held), end=max(i.end for i in held))
    schedule = Schedule.of(interval_cron(model))
    end = start = schedule.floor(execution_time)
    for _ in range(count):
        start = schedule.previous(start)
    return Interval(start=start, end=end)
