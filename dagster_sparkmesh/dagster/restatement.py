"""A person's "Materialize" recomputes: a run launched by a person (the UI, ``dg launch``, a job run) over partitions
that are all complete restates them, as ``plan --restate-model`` over that range would; their readers' intervals
over what they read are restated with them. A selection with gaps computes the gaps (a relaunch after a terminated
run resumes). Runs of the git sensor, schedules and automation conditions, and re-executions of a run, never
restate. The run tag ``sparkmesh/restate: false`` opts a person's run out."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

import dagster as dg
from dagster._core.storage.tags import (
    AUTO_MATERIALIZE_TAG,
    AUTOMATION_CONDITION_TAG,
    PARENT_RUN_ID_TAG,
    SCHEDULE_NAME_TAG,
    SENSOR_NAME_TAG,
)

from dagster_sparkmesh.dagster.specs import SparkMeshSpecs
from dagster_sparkmesh.execution.plans import PLAN_ID_TAG, Restate
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.state.reader import StateReader

RESTATE_TAG = "sparkmesh/restate"
_NEVER_RESTATING = (
    SENSOR_NAME_TAG, SCHEDULE_NAME_TAG, AUTOMATION_CONDITION_TAG, AUTO_MATERIALIZE_TAG, PLAN_ID_TAG, PARENT_RUN_ID_TAG,
)


def launched_by_a_person(tags: dict[str, str]) -> bool:
    """A run no sensor, schedule or automation launched, not a re-execution, not opted out."""
    return not any(tag in tags for tag in _NEVER_RESTATING) and tags.get(RESTATE_TAG, "").lower() != "false"


def run_restatement(
    run: dg.DagsterRun,
    step_keys: Collection[dg.AssetKey],
    specs: SparkMeshSpecs,
    window: tuple[datetime | None, datetime | None],
) -> Restate | None:
    """What a run restates: every model it selects, over its window. A run without a recorded selection (a job's
    whole run, ``materialize()``) restates the models of the step that plans it."""
    if not launched_by_a_person(dict(run.tags)):
        return None
    start, end = window
    keys = run.asset_selection or step_keys
    models = tuple(sorted(specs.model_by_key[key] for key in keys if key in specs.model_by_key))
    return Restate(models, start, end) if models else None


def restatement_lines(plan: Plan, computed: list[str], state: StateReader) -> list[str]:
    """The run log's account of a restatement: what this step recomputes, what its readers elsewhere now miss
    (models with nothing recorded yet are built, not restated: not mentioned)."""
    restated = {
        name: span for name, span in plan.restatements.items()
        if (version := plan.version_of(name)) is not None and state.get_intervals(name, version)
    }
    if not any(name in computed for name in restated):
        return []
    lines = [f"sparkmesh: restating {_ranges(restated, computed)} (a materialization launched by a person "
             "recomputes complete partitions)"]
    elsewhere = {name: span for name, span in restated.items() if name not in computed}
    if elsewhere:
        lines.append(f"sparkmesh: readers restated with it, computed by their own steps or runs: {_ranges(elsewhere, list(elsewhere))}")
    return lines


def _ranges(restatements: dict[str, Interval], names: list[str]) -> str:
    return ", ".join(
        f"{name} [{span.start:%Y-%m-%d %H:%M}, {span.end:%Y-%m-%d %H:%M})".replace(" 00:00", "")
        for name, span in restatements.items()
        if name in names
    ) or "nothing"
