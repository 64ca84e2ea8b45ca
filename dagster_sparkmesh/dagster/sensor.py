"""The git sensor: after each new commit of the project, backfill exactly what the plan is missing, then promote.

Phases, kept in the cursor with the commit they belong to:

- a new commit: ask the webserver to reload this code location (the UI keeps the old definitions otherwise);
  the cursor becomes ``pending`` and the next tick, running the new code, plans. Without reload: plan at once.
- planning: one ranged run per partitions group and contiguous missing range (``run_key`` = commit + group +
  range, so each commit's requests happen once); the cursor becomes ``backfilling``.
- ``backfilling``: each tick reads what the stored plan still misses (no new plan) and, once nothing is, requests
  the promotion asset with the same plan id; then ``done``. Model runs are never requested again in this phase (a
  half-done range would otherwise be requested twice), except ranges that signals reported ready since.

The plan is built once per commit and stored (``execution.plans``): every run the sensor requests carries its id
(``sparkmesh/plan_id``), so the steps execute that plan's backfill and the promotion promotes it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol
from datetime import datetime
from pathlib import Path

import dagster as dg

from dagster_sparkmesh.clock import utc_now
from dagster_sparkmesh.dagster.partitions import key_range_for
from dagster_sparkmesh.dagster.promotion import promotion_key
from dagster_sparkmesh.dagster.specs import SparkMeshSpecs, SpecGroup, build_sparkmesh_specs, selected_models
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.execution.plans import PLAN_ID_TAG
from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.stored import changed_since, decode, still_missing, store_plan
from dagster_sparkmesh.plan.explain import format_plan
from dagster_sparkmesh.project.signals import check_missing_intervals
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.intervals import merge
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.state.store import StateStore, open_state_store

PENDING, BACKFILLING, DONE = "pending", "backfilling", "done"
_SUMMARY_TAG_LIMIT = 4000


@dataclass(frozen=True)
class ReloadTarget:
    """The webserver to ask for a code location reload (``DagsterGraphQLClient.reload_repository_location``)."""

    location_name: str
    host: str = "127.0.0.1"
    port: int = 3000


@dataclass(frozen=True)
class Cursor:
    commit: str | None = None
    phase: str = DONE
    plan_id: str | None = None

    @classmethod
    def parse(cls, text: str | None) -> Cursor:
        if not text:
            return cls()
        data = json.loads(text)
        return cls(commit=data.get("commit"), phase=data.get("phase", DONE), plan_id=data.get("plan_id"))

    def dump(self) -> str:
        return json.dumps({"commit": self.commit, "phase": self.phase, "plan_id": self.plan_id})


def git_head(path: Path) -> str | None:
    """The HEAD commit of the repository holding ``path``; None when it is not in a git repository."""
    completed = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True, check=False, timeout=30
    )
    return completed.stdout.strip() if completed.returncode == 0 else None


def reload_location(target: ReloadTarget, log) -> bool:
    """Best effort: a failed reload is logged, and the next tick plans with whatever code is loaded."""
    from dagster_graphql import DagsterGraphQLClient, ReloadRepositoryLocationStatus

    try:
        info = DagsterGraphQLClient(target.host, port_number=target.port).reload_repository_location(target.location_name)
    except Exception as error:  # noqa: BLE001 - any transport error only delays the reload
        log.warning(f"sparkmesh: could not reload code location {target.location_name}: {error}")
        return False
    if info.status != ReloadRepositoryLocationStatus.SUCCESS:
        log.warning(f"sparkmesh: reloading {target.location_name} failed: {info.message}")
        return False
    return True


class SensorPlanner(Protocol):
    """The sensor's access to plans (I/O: the state store)."""

    def plan(self, project: Project) -> Plan:
        """A new plan of ``project`` against the sensor's environment, stored under its id."""
        ...

    def remaining(self, project: Project, plan_id: str) -> Plan | None:
        """The stored plan with only the intervals still missing now; None when it is not stored (or stale)."""
        ...


def sparkmesh_git_sensor(
    *,
    project_dir: Path | str,
    environment: str,
    load_project: Callable[[], Project],
    planner: SensorPlanner,
    translator: SparkMeshTranslator | None = None,
    reload: ReloadTarget | None = None,
    name: str | None = None,
    minimum_interval_seconds: int = 60,
    default_status: dg.DefaultSensorStatus = dg.DefaultSensorStatus.STOPPED,
    select: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> dg.SensorDefinition:
    """``select`` / ``exclude``: the sparkmesh selectors of the definitions' model assets (runs are requested for
    those only)."""
    translator = translator or SparkMeshTranslator()
    project_dir = Path(project_dir)

    @dg.sensor(
        name=name or f"sparkmesh_{environment}_git_sensor",
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=default_status,
        description=f"Backfills and promotes `{environment}` after each new commit of {project_dir}",
    )
    def _sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        head = git_head(project_dir)
        if head is None:
            return dg.SkipReason(f"{project_dir} is not in a git repository")
        cursor = Cursor.parse(context.cursor)
        if cursor.commit == head and cursor.phase == DONE:
            return dg.SkipReason(f"no new commit (HEAD {head[:12]})")
        if cursor.commit != head and cursor.commit is not None and reload is not None:
            reload_location(reload, context.log)
            return dg.SensorResult(skip_reason=f"reloading code for commit {head[:12]}", cursor=Cursor(head, PENDING).dump())
        project = load_project()
        specs = build_sparkmesh_specs(project, translator, environment, select=select, exclude=exclude)
        if cursor.commit == head and cursor.phase == BACKFILLING and cursor.plan_id:
            plan = planner.remaining(project, cursor.plan_id)
            if plan is not None:
                # Requests only where signals may have released intervals since; run keys make repeats no-ops.
                gated = backfill_requests(ready_only(project, plan), specs, head) if _gated(project, plan) else []
                return _after_backfill(head, plan, gated)
        plan = planner.plan(project)
        context.log.info(format_plan(plan))
        # Runs are requested for ready intervals only; a run key already launched is not launched again, so each
        # tick may ask for what became ready since.
        return _after_new_commit(head, plan, backfill_requests(ready_only(project, plan), specs, head))

    return _sensor


def _gated(project: Project, plan: Plan) -> bool:
    """Whether a signal may hold back some missing interval: then each tick asks for what became ready."""
    return any(project.models[name].signals for name in plan.missing_intervals if name in project.models)


def ready_only(project: Project, plan: Plan) -> Plan:
    """The plan's missing intervals that the models' signals report ready (all of them without signals). What a
    model's signals hold back is held back for its descendants too: they would read the missing time."""
    checks = check_missing_intervals(project.path, project.models, plan.missing_intervals)
    held: dict[str, list[Interval]] = {}
    ready: dict[str, tuple[Interval, ...]] = {}
    for name, model in project.models.items():  # parents first
        inherited = [i for parent in model.depends_on for i in held.get(parent, ())]
        check = checks.get(name)
        if check is None:
            held[name] = inherited
            continue
        own_held = [interval for interval, _ in check.not_ready]
        kept = tuple(i for i in check.ready if not any(_overlaps(i, h) for h in inherited))
        held[name] = inherited + own_held + [i for i in check.ready if i not in kept]
        if kept:
            ready[name] = kept
    return plan.model_copy(update={"missing_intervals": ready})


def _after_new_commit(head: str, plan: Plan, requests: list[dg.RunRequest]) -> dg.SensorResult:
    if requests:
        return dg.SensorResult(run_requests=requests, cursor=Cursor(head, BACKFILLING, plan.plan_id).dump())
    return _after_backfill(head, plan, [])


def _after_backfill(head: str, plan: Plan, requests: list[dg.RunRequest]) -> dg.SensorResult:
    if plan.missing_intervals:
        backfilling = Cursor(head, BACKFILLING, plan.plan_id).dump()
        if requests:
            return dg.SensorResult(run_requests=requests, cursor=backfilling)
        missing = ", ".join(sorted(plan.missing_intervals)[:5])
        return dg.SensorResult(skip_reason=f"waiting for backfill runs: {missing}", cursor=backfilling)
    if not plan.has_changes:
        return dg.SensorResult(skip_reason=f"commit {head[:12]}: nothing to do", cursor=Cursor(head, DONE).dump())
    request = dg.RunRequest(
        run_key=f"{head}:promote:{plan.environment}",
        asset_selection=[promotion_key(plan.environment)],
        tags=_tags(head, plan),
    )
    return dg.SensorResult(run_requests=[request], cursor=Cursor(head, DONE, plan.plan_id).dump())


def backfill_requests(plan: Plan, specs: SparkMeshSpecs, head: str) -> list[dg.RunRequest]:
    """One run per group and contiguous missing range, selecting the group's models missing part of it."""
    requests = []
    for group in specs.groups:
        members = {specs.model_by_key[spec.key]: spec.key for spec in group.specs}
        missing = {name: plan.missing_intervals[name] for name in members if plan.missing_intervals.get(name)}
        if not missing:
            continue
        if group.partitions_def is None:
            requests.append(_request(head, plan, group, [members[name] for name in sorted(missing)], None))
            continue
        for span in merge(i for intervals in missing.values() for i in intervals):
            names = sorted(name for name, intervals in missing.items() if any(_overlaps(i, span) for i in intervals))
            requests.append(_request(head, plan, group, [members[name] for name in names], span))
    return requests


def _overlaps(interval: Interval, span: Interval) -> bool:
    return interval.start < span.end and span.start < interval.end


def _request(head: str, plan: Plan, group: SpecGroup, keys: Sequence[dg.AssetKey], span: Interval | None) -> dg.RunRequest:
    tags = _tags(head, plan)
    label = "all"
    if span is not None:
        key_range = key_range_for(group.partitions_def, span)
        tags["dagster/asset_partition_range_start"] = key_range.start
        tags["dagster/asset_partition_range_end"] = key_range.end
        label = f"{key_range.start}..{key_range.end}"
    return dg.RunRequest(run_key=f"{head}:{group.name}:{label}", asset_selection=list(keys), tags=tags)


def _tags(head: str, plan: Plan) -> dict[str, str]:
    return {
        "sparkmesh/commit": head,
        "sparkmesh/environment": plan.environment,
        PLAN_ID_TAG: plan.plan_id,
        "sparkmesh/plan": format_plan(plan)[:_SUMMARY_TAG_LIMIT],
    }


class StatePlanner:
    """The default planner: plans against the project's state store (or ``state_url``), as of ``clock()``."""

    def __init__(
        self,
        environment: str,
        state_url: str | None,
        clock: Callable[[], datetime] = utc_now,
        selection: tuple[Sequence[str], Sequence[str]] = ((), ()),
    ) -> None:
        self.environment = environment
        self.state_url = state_url
        self.clock = clock
        self.selection = selection
        """(select, exclude) of the definitions: their plans take only those models' changes (``--select-model``),
        so that no interval is left for a model this code location does not run."""

    def plan(self, project: Project) -> Plan:
        select, exclude = self.selection
        chosen = selected_models(project, select, exclude) if select or exclude else None
        with self._state(project) as state:
            plan = build_plan(project, state, self.environment, execution_time=self.clock(), selected=chosen)
            return store_plan(state, plan)

    def remaining(self, project: Project, plan_id: str) -> Plan | None:
        with self._state(project) as state:
            stored = state.get_plan(plan_id)
            if stored is None:
                return None
            plan = decode(stored.plan_json)
            if changed_since(plan, project):
                return None
            return plan.model_copy(update={"missing_intervals": still_missing(state, plan)})

    def _state(self, project: Project) -> StateStore:
        return open_state_store(self.state_url or project.config.state.url, project.path)
