"""The git sensor: after each new commit of the project, show the plan, backfill exactly what it is missing, then
promote, or wait for a person to approve the promotion (and, at the strictest setting, the backfill too).

Phases, kept in the cursor with the commit they belong to:

- a new commit: ask the webserver to reload this code location (the UI keeps the old definitions otherwise),
  plan and show the plan at once; the next tick, running the new code, requests the plan's runs.
- planning: the plan is stored (``execution.plans``) and shown as an observation of the promotion asset; then one
  ranged run per partitions group and contiguous missing range (``run_key`` = commit + group + range, so each
  commit's requests happen once); the cursor becomes ``backfilling``. With ``approval="backfill"`` nothing is
  requested: the cursor becomes ``awaiting_backfill`` until the plan's intervals exist (a person's runs).
- ``backfilling``: each tick reads what the stored plan still misses (no new plan) and, once nothing is, requests
  the promotion asset with the same plan id, or with approval waits (``awaiting_promotion``) until the
  environment serves the plan: a person materializing the promotion asset is the approval. Model runs are never
  requested again in this phase (a half-done range would otherwise be requested twice), except ranges that signals
  reported ready since. A requested run that failed or was canceled is named in the tick (Dagster launches a
  run key once): a person re-executes it, which computes what is still missing, or commits a fix.

Every run the sensor requests carries the plan's id (``sparkmesh/plan_id``), so the steps execute that plan's
backfill and the promotion promotes it. A newer commit supersedes a plan still waiting for approval.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import dagster as dg

from dagster_sparkmesh.dagster.merged_branches import merged_branch_review
from dagster_sparkmesh.dagster.partition_statuses import reconciling_materializations
from dagster_sparkmesh.dagster.sensor_planner import SensorPlanner, StatePlanner
from dagster_sparkmesh.dagster.sensor_requests import (
    absent_models,
    backfill_requests,
    failed_runs,
    failed_runs_message,
    plan_observation,
    promotion_request,
    ready_only,
    runnable,
)
from dagster_sparkmesh.dagster.specs import SparkMeshSpecs, build_sparkmesh_specs, names_label
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.explain import format_plan
from dagster_sparkmesh.project.records import Project

BACKFILLING, DONE = "backfilling", "done"
AWAITING_BACKFILL, AWAITING_PROMOTION = "awaiting_backfill", "awaiting_promotion"

_AWAITING_BACKFILL = "awaiting approval of the backfill: materialize the models' missing partitions to approve it"

Approval = Literal["none", "promotion", "backfill"]
"""What waits for a person: nothing; the promotion (the backfill runs at once, prod's views stay as they are);
or the backfill too (the sensor shows the plan and requests nothing)."""


def default_approval(environment: str) -> Approval:
    """Prod waits for a person's approval of the promotion; other environments promote by themselves."""
    return "promotion" if environment == "prod" else "none"


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


@dataclass(frozen=True)
class _Tick:
    """What one evaluation works with: the commit, the project as of it, its specs and the code location's keys."""

    head: str
    project: Project
    specs: SparkMeshSpecs
    known_keys: frozenset[dg.AssetKey] | None
    active_models: frozenset[str]
    """Models that a queued or running run of this commit computes (not requested again meanwhile)."""
    instance: dg.DagsterInstance
    planner: SensorPlanner
    project_dir: Path
    namespace: str | None

    def observe(self, plan: Plan, status: str) -> dg.AssetObservation:
        """The plan on the promotion asset, with the merged branch's table diff when the commit merges one."""
        review = merged_branch_review(self.instance, self.project_dir, self.head, self.namespace)
        return plan_observation(self.head, plan, status, self.specs.promotion_key, review)

    def requests(self, plan: Plan) -> list[dg.RunRequest]:
        """Runs for what may run now: ready (signals), not in a run already, parents in other groups complete."""
        ready = runnable(self.project, ready_only(self.project, plan), self.specs, self.active_models)
        return backfill_requests(ready, self.specs, self.head)

    def reconciled(self, plan: Plan) -> list[dg.AssetMaterialization]:
        """Partitions Dagster shows failed whose interval the plan's version has complete (a revert brought it
        back, or later batches failed): materialized, so the asset pages say what the environment serves."""
        versions = {name: v for name in self.specs.model_by_key.values() if (v := plan.version_of(name))}
        recorded = self.planner.recorded(self.project, versions)
        return reconciling_materializations(self.instance, self.specs, versions, recorded)


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
    target: dg.AssetSelection | None = None,
    approval: Approval | None = None,
    namespace: str | None = None,
) -> dg.SensorDefinition:
    """``namespace``: the project's, when several share the environment in one code location. ``select`` / ``exclude``: the sparkmesh selectors of the definitions' model assets (runs are requested for
    those only). ``target``: the assets the sensor may request (Dagster resolves every run request against it;
    default: every asset of the code location). ``approval``: see ``Approval`` (default: ``default_approval``)."""
    translator = translator or SparkMeshTranslator()
    project_dir = Path(project_dir)
    approval = approval or default_approval(environment)

    @dg.sensor(
        name=name or f"sparkmesh_{names_label(environment, namespace)}_git_sensor",
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=default_status,
        asset_selection=target or dg.AssetSelection.all(),
        description=f"Plans `{environment}` after each new commit of {project_dir}, backfills what the plan misses "
        f"and promotes it{' after your approval (materialize the promotion asset)' if approval != 'none' else ''}",
    )
    def _sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        head = git_head(project_dir)
        if head is None:
            return dg.SkipReason(f"{project_dir} is not in a git repository")
        cursor = Cursor.parse(context.cursor)
        if cursor.commit == head and cursor.phase == DONE:
            return dg.SkipReason(f"no new commit (HEAD {head[:12]})")
        reloading = cursor.commit != head and cursor.commit is not None and reload is not None
        if reloading:
            reload_location(reload, context.log)
        try:
            project = load_project()
        except SparkMeshError as error:
            # The commit's project does not load: say why in the tick, plan nothing until a commit fixes it.
            return dg.SkipReason(f"commit {head[:12]} does not load, nothing planned: {error}")
        specs = build_sparkmesh_specs(project, translator, environment, select=select, exclude=exclude, namespace=namespace)
        tick = _Tick(head, project, specs, _asset_keys(context), _active_models(context, specs, head), context.instance,
                     planner, project_dir, namespace)
        if cursor.commit == head and cursor.plan_id and cursor.phase in (BACKFILLING, AWAITING_BACKFILL, AWAITING_PROMOTION):
            resumed = _resume(tick, cursor, planner, approval)
            if resumed is not None:
                return resumed
        plan = planner.plan(project)
        context.log.info(format_plan(plan))
        if reloading:  # the plan shows now; its runs wait for the reloaded code (the next tick resumes the plan)
            return _shown_while_reloading(tick, plan, approval)
        return _planned(tick, plan, approval)

    return _sensor


def _asset_keys(context: dg.SensorEvaluationContext) -> frozenset[dg.AssetKey] | None:
    repository = context.repository_def
    return frozenset(repository.asset_graph.get_all_asset_keys()) if repository is not None else None


UNFINISHED_RUNS = [  # a run that may still compute (the branch sensor keeps the exports these read)
    dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING,
]


def _active_models(context: dg.SensorEvaluationContext, specs: SparkMeshSpecs, head: str) -> frozenset[str]:
    runs = context.instance.get_runs(filters=dg.RunsFilter(tags={"sparkmesh/commit": head}, statuses=UNFINISHED_RUNS))
    keys = {key for run in runs for key in (run.asset_selection or ())}
    return frozenset(specs.model_by_key[key] for key in keys if key in specs.model_by_key)


def _planned(tick: _Tick, plan: Plan, approval: Approval) -> dg.SensorResult:
    """A new plan: shown on the promotion asset, then its backfill requested (or left to a person)."""
    if approval == "backfill" and plan.missing_intervals:
        status = _AWAITING_BACKFILL
        return dg.SensorResult(skip_reason=f"commit {tick.head[:12]}: {status}",
                               cursor=Cursor(tick.head, AWAITING_BACKFILL, plan.plan_id).dump(),
                               asset_events=[tick.observe(plan, status)])
    result = _backfill_or_promote(tick, plan, approval)
    status = "backfilling" if plan.missing_intervals else "planned"
    return _with_events(result, [tick.observe(plan, status)])


def _shown_while_reloading(tick: _Tick, plan: Plan, approval: Approval) -> dg.SensorResult:
    phase = AWAITING_BACKFILL if approval == "backfill" and plan.missing_intervals else BACKFILLING
    status = "planned; the code location is reloading for this commit, then its runs start"
    if phase == AWAITING_BACKFILL:
        status = _AWAITING_BACKFILL
    return dg.SensorResult(skip_reason=f"commit {tick.head[:12]}: {status}", cursor=Cursor(tick.head, phase, plan.plan_id).dump(),
                           asset_events=[tick.observe(plan, status)])


def _resume(tick: _Tick, cursor: Cursor, planner: SensorPlanner, approval: Approval) -> dg.SensorResult | None:
    """The commit's stored plan, one phase further; None when the plan is gone or stale (then plan again)."""
    assert cursor.plan_id is not None
    if cursor.phase == AWAITING_PROMOTION:
        if planner.promoted(tick.project, cursor.plan_id):
            return dg.SensorResult(skip_reason=f"commit {tick.head[:12]}: promoted", cursor=Cursor(tick.head, DONE, cursor.plan_id).dump())
        return _awaiting_promotion(tick, cursor.plan_id)
    plan = planner.remaining(tick.project, cursor.plan_id)
    if plan is None:
        return None
    if cursor.phase == AWAITING_BACKFILL and plan.missing_intervals:
        missing = ", ".join(sorted(plan.missing_intervals)[:5])
        return dg.SensorResult(skip_reason=f"awaiting approval of the backfill (materialize {missing})",
                               cursor=Cursor(tick.head, AWAITING_BACKFILL, plan.plan_id).dump())
    return _backfill_or_promote(tick, plan, approval)


def _backfill_or_promote(tick: _Tick, plan: Plan, approval: Approval) -> dg.SensorResult:
    """Runs for what the plan still misses and may run now (run keys make a repeated request a no-op); once
    nothing is missing, the promotion, or the wait for its approval."""
    if plan.missing_intervals:
        absent = absent_models(plan, tick.specs, tick.known_keys)
        if absent:
            return dg.SensorResult(
                skip_reason=f"the code location has no asset of {', '.join(absent[:5])} yet: reload it (the webserver's "
                "Reload, or `reload` in the sensor's settings) to run this commit",
                cursor=Cursor(tick.head, BACKFILLING, plan.plan_id).dump(),
            )
        requests = tick.requests(plan)
        failed = failed_runs(tick.instance, requests)
        requests = [request for request in requests if request.run_key not in failed]
        backfilling = Cursor(tick.head, BACKFILLING, plan.plan_id).dump()
        if requests:
            return dg.SensorResult(run_requests=requests, cursor=backfilling)
        if failed:
            return dg.SensorResult(skip_reason=failed_runs_message(failed), cursor=backfilling)
        missing = ", ".join(sorted(plan.missing_intervals)[:5])
        return dg.SensorResult(skip_reason=f"waiting for backfill runs: {missing}", cursor=backfilling)
    reconciled = tick.reconciled(plan)
    if not plan.has_changes:
        done = dg.SensorResult(skip_reason=f"commit {tick.head[:12]}: nothing to do", cursor=Cursor(tick.head, DONE).dump())
        return _with_events(done, reconciled)
    if approval != "none":
        status = f"backfilled; awaiting approval: materialize {tick.specs.promotion_key.to_user_string()} to promote"
        waiting = _awaiting_promotion(tick, plan.plan_id)
        return _with_events(waiting, [*reconciled, tick.observe(plan, status)])
    promote = [promotion_request(tick.head, plan, tick.specs.promotion_key)]
    return _with_events(dg.SensorResult(run_requests=promote, cursor=Cursor(tick.head, DONE, plan.plan_id).dump()), reconciled)


def _awaiting_promotion(tick: _Tick, plan_id: str) -> dg.SensorResult:
    return dg.SensorResult(
        skip_reason=f"commit {tick.head[:12]} is backfilled and awaits approval: materialize the promotion asset",
        cursor=Cursor(tick.head, AWAITING_PROMOTION, plan_id).dump(),
    )


def _with_events(result: dg.SensorResult, events: Sequence[dg.AssetObservation | dg.AssetMaterialization]) -> dg.SensorResult:
    return dg.SensorResult(
        run_requests=result.run_requests, skip_reason=result.skip_reason, cursor=result.cursor,
        asset_events=[*(result.asset_events or []), *events],
    )


__all__ = ["Approval", "Cursor", "ReloadTarget", "SensorPlanner", "StatePlanner", "default_approval", "sparkmesh_git_sensor"]
