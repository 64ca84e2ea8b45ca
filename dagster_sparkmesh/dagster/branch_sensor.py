"""The branch sensor: every branch the settings name gets a partition of the branch environments asset and a run
per new head commit; a branch deleted, or merged into the prod branch, loses its partition, its environment is
invalidated and the janitor job drops its views (its tables follow once no environment reads them, after the
snapshot TTL). The working tree the code location serves is never touched (heads are read with ``git``).

Cursor (``BranchCursor``): environment → the branch and head commit last requested, and per environment a
generation counted up each time it goes, so that a branch re-created at a commit it had before is built again (run
keys are unique per generation and commit: a repeated request is a no-op, a lost cursor costs a tick).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import dagster as dg
from pydantic import BaseModel

from dagster_sparkmesh.dagster.branch_environments import BRANCH_TAG, COMMIT_TAG, BranchEnvironments, branch_partitions
from dagster_sparkmesh.dagster.sensor import UNFINISHED_RUNS
from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.project.commit_trees import (
    BranchHead,
    fetch_remote,
    forget_exports,
    is_ancestor,
    repository_root,
    resolve_commit,
)
from dagster_sparkmesh.state.store import open_state_store


class BranchCursor(BaseModel):
    built: dict[str, BranchHead] = {}
    """Environment → the head last requested."""
    generations: dict[str, int] = {}
    """Environment → how many times it went (deleted or merged branch)."""

    @classmethod
    def parse(cls, text: str | None) -> BranchCursor:
        return cls.model_validate_json(text) if text else cls()


def sparkmesh_branch_sensor(
    *,
    project_dir: Path,
    settings: BranchEnvironments,
    served: str,
    label: str,
    branch_job: dg.UnresolvedAssetJobDefinition,
    janitor: dg.JobDefinition,
    state_url: str,
) -> dg.SensorDefinition:
    """``served``: the environment of the code location (never a branch's); ``state_url``: the checkout's store."""
    partitions = branch_partitions(label)

    @dg.sensor(
        name=f"sparkmesh_{label}_branch_sensor",
        jobs=[branch_job, janitor],
        minimum_interval_seconds=settings.interval_seconds,
        default_status=settings.sensor_status,
        description=f"An environment per git branch of {project_dir} matching {', '.join(settings.branches)} (not "
        f"{settings.prod_branch}): planned, backfilled and compared with prod at each new head; removed once the "
        "branch is deleted or merged.",
    )
    def _sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        root = repository_root(project_dir)
        if root is None:
            return dg.SkipReason(f"{project_dir} is not in a git repository")
        fetch_failed = fetch_remote(root, settings.fetch) if settings.fetch else None
        if fetch_failed:
            context.log.warning(f"sparkmesh: could not fetch {settings.fetch}, using the refs as they are: {fetch_failed}")
        previous = BranchCursor.parse(context.cursor)
        try:
            live, notes = _live_heads(root, settings, served)
        except SparkMeshError as error:  # git failed: change nothing (an empty listing would remove every branch)
            return dg.SkipReason(f"branches not read, nothing changed: {error}")
        known = set(context.instance.get_dynamic_partitions(partitions.name))
        gone = sorted((known | set(previous.built)) - set(live))
        generations = {**previous.generations, **{env: previous.generations.get(env, 0) + 1 for env in gone}}
        requests = [_request(branch_job.name, env, head, generations.get(env, 0)) for env, head in live.items()
                    if env not in previous.built or previous.built[env].commit != head.commit or env not in known]
        invalidated = _invalidate(project_dir, state_url, gone)
        if invalidated:
            requests.append(_janitor_request(janitor.name, invalidated, generations))
        forget_exports(project_dir, keep=[*(h.commit for h in live.values()), *_commits_in_flight(context, branch_job.name)])
        cursor = BranchCursor(built=live, generations=generations)
        changes = _partition_changes(partitions.name, set(live) - known, [e for e in gone if e in known])
        for note in notes:
            context.log.warning(f"sparkmesh: {note}")
        summary = _summary(live, gone, notes)
        return dg.SensorResult(run_requests=requests, cursor=cursor.model_dump_json(),
                               dynamic_partitions_requests=changes, skip_reason=None if requests else summary)

    return _sensor


def _live_heads(root: Path, settings: BranchEnvironments, served: str) -> tuple[dict[str, BranchHead], list[str]]:
    """Environment → branch head, for the branches not merged into the prod branch; notes on what was left out."""
    prod = resolve_commit(root, settings.prod_ref())
    notes = [] if prod is not None else [f"prod branch {settings.prod_ref()} not found: no branch counts as merged"]
    live: dict[str, BranchHead] = {}
    for head in settings.heads(root):
        if prod is not None and is_ancestor(root, head.commit, prod):
            continue  # merged (or not diverged yet): prod serves it
        try:
            environment = settings.environment_of(head.name, served)
        except SparkMeshError as error:
            notes.append(f"refused {head.name!r}: {error}")
            continue
        if environment in live:  # cannot happen with digests; refused rather than built into another's views
            notes.append(f"refused {head.name!r}: its environment {environment} is {live[environment].name!r}'s")
            continue
        live[environment] = head
    return live, notes


def _request(job_name: str, environment: str, head: BranchHead, generation: int) -> dg.RunRequest:
    return dg.RunRequest(
        run_key=f"{environment}:{generation}:{head.commit}", job_name=job_name, partition_key=environment,
        tags={BRANCH_TAG: head.name, COMMIT_TAG: head.commit, "sparkmesh/environment": environment},
    )


def _janitor_request(job_name: str, invalidated: list[str], generations: dict[str, int]) -> dg.RunRequest:
    what = " ".join(f"{env}:{generations.get(env, 0)}" for env in invalidated)
    return dg.RunRequest(run_key=f"janitor:{hashlib.sha256(what.encode()).hexdigest()[:16]}", job_name=job_name)


def _partition_changes(name: str, added: set[str], deleted: list[str]) -> list:
    changes: list = [dg.AddDynamicPartitionsRequest(name, sorted(added))] if added else []
    return changes + ([dg.DeleteDynamicPartitionsRequest(name, deleted)] if deleted else [])


def _commits_in_flight(context: dg.SensorEvaluationContext, job_name: str) -> list[str]:
    """Commits that queued or running branch runs read (their exports stay)."""
    runs = context.instance.get_runs(filters=dg.RunsFilter(job_name=job_name, statuses=UNFINISHED_RUNS))
    return [run.tags[COMMIT_TAG] for run in runs if COMMIT_TAG in run.tags]


def _invalidate(project_dir: Path, state_url: str, environments: list[str]) -> list[str]:
    """Mark the environments expired now; the ones that existed (the janitor has work)."""
    if not environments:
        return []
    with open_state_store(state_url, project_dir) as state:
        return [name for name in environments if state.invalidate_environment(name)]


def _summary(live: dict[str, BranchHead], gone: list[str], notes: list[str]) -> str:
    parts = [f"{len(live)} branch environment(s) up to date" if live else "no branch to plan"]
    if gone:
        parts.append(f"removed: {', '.join(gone)}")
    return "; ".join(parts + notes)
