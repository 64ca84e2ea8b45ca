"""A person's "Materialize" recomputes: a run launched by a person (the UI, ``dg launch``, a job run) restates the
complete partitions it selects, as ``plan --restate-model`` over that range would, and computes its gaps beside
them; their readers' intervals over what they read are restated with them. Runs of the git sensor, schedules and
automation conditions never restate, nor do re-executions of a run (the UI's "Re-execute" after a terminated or
failed run resumes: it computes what is still missing). The run tag ``sparkmesh/restate: false`` opts a person's
run out."""

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
RESTATED_READERS_TAG = "sparkmesh/restated_readers"
"""Added to a run whose restatement left readers outside it to compute (value: the environment): the restated
readers' sensor requests their runs once the run succeeds."""
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


def restated(plan: Plan, state: StateReader) -> dict[str, Interval]:
    """The plan's restatements of models with something recorded (models never built are built, not restated)."""
    return {
        name: span for name, span in plan.restatements.items()
        if (version := plan.version_of(name)) is not None and state.get_intervals(name, version)
    }


def restatement_lines(restatements: dict[str, Interval], computed: list[str]) -> list[str]:
    """The run log's account of a restatement: what this step recomputes, what its readers elsewhere now miss."""
    if not any(name in computed for name in restatements):
        return []
    lines = [f"sparkmesh: restating {_ranges(restatements, computed)} (a materialization launched by a person "
             "recomputes complete partitions)"]
    elsewhere = readers_elsewhere(restatements, computed)
    if elsewhere:
        lines.append(f"sparkmesh: readers restated with it, computed by their own steps or runs: {_ranges(elsewhere, list(elsewhere))}")
    return lines


def readers_elsewhere(restatements: dict[str, Interval], computed: list[str]) -> dict[str, Interval]:
    """What a step's restatement leaves to other steps or runs: the restated models it does not compute."""
    if not any(name in computed for name in restatements):
        return {}
    return {name: span for name, span in restatements.items() if name not in computed}


def _ranges(restatements: dict[str, Interval], names: list[str]) -> str:
    return ", ".join(
        f"{name} [{span.start:%Y-%m-%d %H:%M}, {span.end:%Y-%m-%d %H:%M})".replace(" 00:00", "")
        for name, span in restatements.items()
        if name in names
    ) or "nothing"
