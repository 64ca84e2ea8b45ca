"""What the git sensor asks Dagster for: ranged runs of the models a plan misses, the promotion, and the plan as an
observation of the promotion asset (where a Dagster user finds it before anything runs)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence

import dagster as dg
from dagster._core.storage.tags import RUN_KEY_TAG

from dagster_sparkmesh.dagster.markdown import plan_markdown
from dagster_sparkmesh.dagster.partitions import key_range_for
from dagster_sparkmesh.dagster.specs import SparkMeshSpecs, SpecGroup
from dagster_sparkmesh.execution.plans import PLAN_ID_TAG
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.explain import format_plan
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.project.signals import check_missing_intervals
from dagster_sparkmesh.snapshot.intervals import merge
from dagster_sparkmesh.snapshot.records import Interval

_SUMMARY_TAG_LIMIT = 4000


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


def runnable(project: Project, plan: Plan, specs: SparkMeshSpecs, active: Collection[str] = ()) -> Plan:
    """The plan's missing intervals that a run may compute now: not of a model an ``active`` run of the commit is
    computing, nor of one whose ancestor in another run (another partitions group) still misses intervals. A
    step orders the models of its own group; across groups, runs start only once their parents exist."""
    group_of = {specs.model_by_key[spec.key]: group.name for group in specs.groups for spec in group.specs}
    ancestors = _ancestors(project)
    missing = plan.missing_intervals
    kept = {
        name: intervals
        for name, intervals in missing.items()
        if name not in active
        and not any(parent in missing and group_of.get(parent) != group_of.get(name) for parent in ancestors.get(name, ()))
    }
    return plan.model_copy(update={"missing_intervals": kept})


def _ancestors(project: Project) -> dict[str, frozenset[str]]:
    found: dict[str, frozenset[str]] = {}
    for name, model in project.models.items():  # parents first
        parents = [p for p in model.depends_on if p in project.models]
        found[name] = frozenset(parents).union(*(found.get(p, frozenset()) for p in parents))
    return found


def backfill_requests(
    plan: Plan, specs: SparkMeshSpecs, head: str, run_tags: dict[str, str] | None = None
) -> list[dg.RunRequest]:
    """One run per group and contiguous missing range, selecting the group's models missing part of it. ``head``
    starts each run key; ``run_tags``: the runs' tags (default: the commit's and the plan's)."""
    run_tags = tags(head, plan) if run_tags is None else run_tags
    requests = []
    for group in specs.groups:
        members = {specs.model_by_key[spec.key]: spec.key for spec in group.specs}
        missing = {name: plan.missing_intervals[name] for name in members if plan.missing_intervals.get(name)}
        if not missing:
            continue
        if group.partitions_def is None:
            requests.append(_request(head, run_tags, group, [members[name] for name in sorted(missing)], None))
            continue
        for span in merge(i for intervals in missing.values() for i in intervals):
            names = sorted(name for name, intervals in missing.items() if any(_overlaps(i, span) for i in intervals))
            requests.append(_request(head, run_tags, group, [members[name] for name in names], span))
    return requests


ENDED_UNSUCCESSFULLY = (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED)


def failed_runs(instance: dg.DagsterInstance, requests: Sequence[dg.RunRequest]) -> dict[str, dg.DagsterRun]:
    """Run key → the latest run of that key, for the requests whose latest run failed or was canceled. Dagster's
    daemon launches a run key once and skips it as completed after that, so the sensor names such a run (for a
    person to re-execute) instead of requesting it in vain."""
    failed = {}
    for request in requests:
        latest = instance.get_runs(filters=dg.RunsFilter(tags={RUN_KEY_TAG: request.run_key}), limit=1)
        if latest and latest[0].status in ENDED_UNSUCCESSFULLY:
            failed[request.run_key] = latest[0]
    return failed


def failed_runs_message(failed: Mapping[str, dg.DagsterRun]) -> str:
    runs = "; ".join(
        f"run {run.run_id[:8]} ({', '.join(sorted(k.to_user_string() for k in run.asset_selection or ()))}) "
        f"{'failed' if run.status == dg.DagsterRunStatus.FAILURE else 'was canceled'}"
        for run in failed.values()
    )
    return (f"{runs}: open it on the Runs page and Re-execute it (it computes what is still missing), "
            "or commit a fix (a new commit plans again)")


def absent_models(plan: Plan, specs: SparkMeshSpecs, known: Collection[dg.AssetKey] | None) -> list[str]:
    """The plan's models with missing intervals that the loaded code location has no asset of (it runs older code
    than the commit: a reload is due). ``known``: the code location's asset keys; None when the tick cannot say."""
    if known is None:
        return []
    return sorted(name for name in plan.missing_intervals if specs.key_by_model.get(name) not in known)


def promotion_request(head: str, plan: Plan, key: dg.AssetKey) -> dg.RunRequest:
    """``key``: the environment's promotion asset."""
    return dg.RunRequest(
        run_key=f"{head}:promote:{plan.environment}", asset_selection=[key],
        tags=tags(head, plan),
    )


def plan_observation(
    head: str, plan: Plan, status: str, key: dg.AssetKey, review: Mapping[str, object] | None = None
) -> dg.AssetObservation:
    """The plan on the promotion asset's page: what the commit changes and what it will compute, and where the
    change loop stands (``status``), one observation per step of the loop. ``review``: the merged branch's
    environment compared with prod, when the commit merges one (``dagster.merged_branches``)."""
    return dg.AssetObservation(
        asset_key=key,
        metadata={
            "status": status,
            "commit": head,
            "plan_id": plan.plan_id,
            "plan": dg.MetadataValue.md(plan_markdown(plan)),
            "models_to_compute": len(plan.missing_intervals),
            "intervals_to_compute": sum(len(intervals) for intervals in plan.missing_intervals.values()),
            **(review or {}),
        },
        tags={"sparkmesh/commit": head, PLAN_ID_TAG: plan.plan_id},
    )


def _overlaps(interval: Interval, span: Interval) -> bool:
    return interval.start < span.end and span.start < interval.end


def _request(
    head: str, base_tags: dict[str, str], group: SpecGroup, keys: Sequence[dg.AssetKey], span: Interval | None
) -> dg.RunRequest:
    run_tags = dict(base_tags)
    label = "all"
    if span is not None:
        key_range = key_range_for(group.partitions_def, span)
        run_tags["dagster/asset_partition_range_start"] = key_range.start
        run_tags["dagster/asset_partition_range_end"] = key_range.end
        label = f"{key_range.start}..{key_range.end}"
    # The models are part of the key: a group's later run of other models (their parents done) is a new request.
    models = hashlib.sha256(" ".join(sorted(k.to_user_string() for k in keys)).encode()).hexdigest()[:12]
    return dg.RunRequest(run_key=f"{head}:{group.name}:{label}:{models}", asset_selection=list(keys), tags=run_tags)


def tags(head: str, plan: Plan) -> dict[str, str]:
    return {
        "sparkmesh/commit": head,
        "sparkmesh/environment": plan.environment,
        PLAN_ID_TAG: plan.plan_id,
        "sparkmesh/plan": format_plan(plan)[:_SUMMARY_TAG_LIMIT],
    }
