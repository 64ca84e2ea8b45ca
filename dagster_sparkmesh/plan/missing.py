"""What each model misses in a plan: its expected cron intervals in its window, less what is recorded. Pure.

Rebuilt kinds (FULL, VIEW, SEED) list every interval from their own start once anything in the window is missing
(the rebuild records them all, for the time its parents covered: ``plan.coverage``). A self-referencing model
misses every interval after a missing one (each read the one before); a ``lookback`` model recomputes the
intervals just before a missing one, and the ones it holds that read time its parents compute for the first time. A restated range is computed again even where it reaches past the window.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime

from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.plan.intervals import Schedule, expected_intervals, interval_cron, with_lookback
from dagster_sparkmesh.snapshot.intervals import remove_range, uncovered, without
from dagster_sparkmesh.snapshot.records import Interval


@dataclass(frozen=True)
class Window:
    """A model's time in a plan."""

    start: datetime
    end: datetime
    model_start: datetime
    """The model's own start, before the plan's ``--start`` narrows it."""
    partial: bool = False
    """Whether the window may end inside an interval, which is then computed so far (``allow_partials``, in a
    plan that computes partial intervals: not Dagster's, not a seed's)."""


def missing_intervals(
    models: dict[str, Model],
    windows: dict[str, Window],
    recorded: dict[str, list[Interval]],
    restatements: dict[str, Interval],
    shared_with_prod: frozenset[str] = frozenset(),
) -> dict[str, tuple[Interval, ...]]:
    """``shared_with_prod``: models whose table prod reads, in a development plan: never recomputed for new parent
    time (architecture invariant 6)."""
    missing: dict[str, tuple[Interval, ...]] = {}
    for name in (n for n in models if n in recorded):
        done, window = recorded[name], windows[name]
        if name in restatements:
            restated = restatements[name]
            done = remove_range(done, restated)
            window = dataclasses.replace(window, start=min(window.start, restated.start), end=max(window.end, restated.end))
        todo = _missing_for(models[name], window, done)
        if name not in shared_with_prod:
            todo = sorted(set(todo) | set(_reading_new_parent_time(models, name, window, done, missing, recorded)))
        if todo:
            missing[name] = tuple(todo)
    return missing


def _reading_new_parent_time(
    models: dict[str, Model],
    name: str,
    window: Window,
    done: list[Interval],
    missing: dict[str, tuple[Interval, ...]],
    recorded: dict[str, list[Interval]],
) -> list[Interval]:
    """A ``lookback`` model's recorded intervals that read time its time-partitioned parents compute in this plan
    for the first time (e.g. a start moved earlier): each read the ``lookback`` intervals before it, which the
    parent did not have then, so each is computed again, as a fresh build would compute it. Only a parent version
    that holds data counts (a new version computes everything anew, which its unchanged readers keep reading as
    SQLMesh's do), and only time it never held (what it recomputes, restated or looked back at, is not new)."""
    model = models[name]
    lookback = getattr(model.kind, "lookback", 0)
    if not lookback or not done:
        return []
    schedule = Schedule.of(interval_cron(model))
    stale: set[Interval] = set()
    for parent in model.depends_on:
        held = recorded.get(parent)
        if parent not in missing or not held or parent not in models or models[parent].kind.restates_whole_table:
            continue
        for span in without(missing[parent], held):
            end = schedule.floor(span.end) if schedule.floor(span.end) == span.end else schedule.next(span.end)
            for _ in range(lookback):
                end = schedule.next(end)
            reads = expected_intervals(interval_cron(model), max(span.start, window.start), min(end, window.end))
            stale.update(i for i in reads if any(d.start <= i.start and i.end <= d.end for d in done))
    return sorted(stale)


def _missing_for(model: Model, window: Window, done: list[Interval]) -> list[Interval]:
    cron = interval_cron(model)
    expected = expected_intervals(cron, window.start, window.end, partial=window.partial)
    todo = uncovered(done, expected)
    if model.kind.rebuilt_each_run:
        # Before the window nothing is asked: what its parents lacked there, the plan does not compute either.
        return expected_intervals(cron, window.model_start, window.end, partial=window.partial) if todo else []
    if todo and model.depends_on_self:
        return [interval for interval in expected if interval.start >= todo[0].start]
    lookback = getattr(model.kind, "lookback", 0)
    if todo and lookback:
        return with_lookback(todo, cron, lookback, expected[0].start)
    return todo
