"""A step may compute a model only once the parents it does not compute itself exist: otherwise the query meets a
missing table and Spark answers with a bare ``TABLE_OR_VIEW_NOT_FOUND``. Checked before any write, from the state
store (a parent's version with no interval recorded has never been built)."""

from __future__ import annotations

from collections.abc import Collection

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.records import IntervalsToCompute
from dagster_sparkmesh.state.reader import StateReader


def check_parents_built(
    project: Project, state: StateReader, plan: Plan, intervals: IntervalsToCompute, selected: Collection[str]
) -> None:
    """Raise, naming every parent to build first and the intervals it lacks, when a selected model that has
    intervals to compute reads a model outside ``selected`` that was never built."""
    unbuilt: dict[str, list[str]] = {}
    for name in selected:
        if not intervals.get(name):
            continue
        for parent in sorted(project.models[name].depends_on - set(selected)):
            snapshot = plan.environment_after.snapshot_for(parent)
            if snapshot is None or not snapshot.kind_type.has_physical_layer:
                continue  # an external model, or a view over parents checked in their own turn
            if not state.get_intervals(parent, snapshot.version):
                unbuilt.setdefault(parent, []).append(name)
    if unbuilt:
        raise ExecutionError(
            "cannot compute " + "; ".join(
                f"{', '.join(readers)}: parent {parent} {_missing(intervals, parent)}"
                for parent, readers in unbuilt.items()
            ),
            hint=f"build {', '.join(unbuilt)} first (materialize it, or select it in the same run), then run this again",
        )


def _missing(to_compute: IntervalsToCompute, parent: str) -> str:
    intervals = to_compute.get(parent, ())
    if not intervals:
        return "has never been built"
    span = f"[{intervals[0].start:%Y-%m-%d %H:%M}, {intervals[-1].end:%Y-%m-%d %H:%M})".replace(" 00:00", "")
    return f"has not been built (to build: {len(intervals)} interval(s) in {span})"
