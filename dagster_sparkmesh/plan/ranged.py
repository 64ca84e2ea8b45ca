"""A plan's backfill stage narrowed to a time window: what a Dagster step of a partition range computes.

The plan fixes the versions (so the tables) and its restatements were applied when it was prepared; the step
asks the state store what its selected models miss in its window *now*, so a step retried or launched again after
another run filled part of the range computes only what is still missing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime

from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.missing import Window, missing_intervals
from dagster_sparkmesh.plan.stages import Backfill
from dagster_sparkmesh.plan.windows import model_windows
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.state.reader import StateReader


def backfill_in_window(
    plan: Plan,
    project: Project,
    state: StateReader,
    *,
    models: Iterable[str] | None,
    start: datetime | None,
    end: datetime | None,
    now: datetime,
    prepared: bool,
) -> Backfill:
    """The backfill of ``models`` (default: all of the plan's) over ``[start, end)`` (default: the plan's window).

    ``prepared``: whether the plan's restatements were applied already; if not (this step prepares it), the
    restated part of the window is computed as if they were, since the state store still records it."""
    versions = {s.name: s.version for s in plan.environment_after.snapshots}
    wanted = set(models) if models is not None else set(versions)
    selected = {name: model for name, model in project.models.items() if name in wanted and name in versions}
    windows, _, _ = model_windows(
        project, selected, start or plan.start, end or plan.end, now, ignore_cron=True, partials=False
    )
    for name, preview in plan.previews.items():  # a preview table holds the preview range only
        if name in windows:
            window = windows[name]
            windows[name] = dataclasses.replace(window, start=max(window.start, preview.start), model_start=preview.start)
    recorded = {
        name: state.get_intervals(name, versions[name])
        for name, model in selected.items()
        if model.kind.has_physical_layer
    }
    restated = {} if prepared else _restated_within(plan, windows)
    return Backfill(intervals=missing_intervals(selected, windows, recorded, restated), models=tuple(selected))


def _restated_within(plan: Plan, windows: dict[str, Window]) -> dict[str, Interval]:
    clipped = {}
    for name, restated in plan.restatements.items():
        if name in windows:
            start, end = max(restated.start, windows[name].start), min(restated.end, windows[name].end)
            if start < end:
                clipped[name] = Interval(start=start, end=end)
    return clipped
