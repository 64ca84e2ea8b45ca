"""Missing intervals of an environment as it is, whatever the project files say now (``sparkmesh check-intervals``).

The environment's own models are rebuilt from the snapshots it points at and planned against itself: the
fingerprints match, so the plan changes nothing and its ``missing_intervals`` are exactly what the environment
lacks, with every rule of the planner (model start and end, lookback, whole-table kinds, forward-only previews).
Pure: reads the state through ``StateReader``, never Spark.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.plan.coverage import InputGap, lacking_inputs
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.project.config import ProjectConfig
from dagster_sparkmesh.project.dag import topological_order
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.records import Environment, Interval, SnapshotId
from dagster_sparkmesh.state.reader import StateReader


def environment_check_plan(
    state: StateReader, environment: str, *, config: ProjectConfig, project_path: Path, execution_time: datetime
) -> Plan:
    """A plan of the environment against itself; ``missing_intervals`` and ``notes`` say what it lacks."""
    env = state.get_environment(environment.lower())
    if env is None:
        raise PlanError(
            f"no environment named {environment!r}",
            snippet=environment,
            hint="`sparkmesh environments` lists them; `sparkmesh plan ENV` creates one",
        )
    project = _environment_project(state, env, config, project_path)
    return build_plan(
        project,
        state,
        env.name,
        start=env.start,
        end=env.end,
        execution_time=execution_time,
        plan_id=env.plan_id,
        preview_start=env.preview_start,
    )


def environment_input_gaps(
    state: StateReader, plan: Plan, *, config: ProjectConfig, project_path: Path
) -> dict[str, list[InputGap]]:
    """Models of the checked environment holding intervals (in its window) that their parents lack."""
    env = state.get_environment(plan.environment)
    if env is None:
        return {}
    project = _environment_project(state, env, config, project_path)
    versions = {s.name: s.version for s in plan.environment_after.snapshots}
    window = Interval(start=plan.start, end=plan.end)
    return lacking_inputs(project, versions, window, state, plan.execution_time)


def _environment_project(state: StateReader, env: Environment, config: ProjectConfig, path: Path) -> Project:
    models = _environment_models(state, env)
    ordered = {name: models[name] for name in topological_order(models)}
    return Project(path=path, config=config, models=ordered)


def _environment_models(state: StateReader, env: Environment) -> dict[str, Model]:
    ids = [SnapshotId(name=s.name, fingerprint=s.fingerprint) for s in env.snapshots]
    found = state.get_snapshots(ids)
    lost = sorted(i.name for i in ids if i not in found)
    if lost:
        raise PlanError(
            f"environment {env.name} refers to snapshots the state store does not hold: {', '.join(lost)}",
            hint="the state store is inconsistent; restore it or invalidate the environment",
        )
    return {snapshot.name: Model.model_validate_json(snapshot.model_json) for snapshot in found.values()}
