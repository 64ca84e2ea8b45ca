"""The branch sensor: every branch the settings name gets a partition of the branch environments asset and a run
per new head commit; a branch deleted, or merged into the prod branch, loses its partition, its environment is
invalidated and the janitor job drops its views (its tables follow once no environment reads them, after the
snapshot TTL). The working tree the code location serves is never touched (heads are read with ``git``).

Cursor (``BranchCursor``): environment → the branch and head commit last requested, and per environment a
generation counted up each time it goes, so that a branch re-created at a commit it had before is built again (run
keys are unique per generation and commit: a repeated request is a no-op, a lost cursor costs a tick).

One run per environment at a time: while an environment's run is queued or running, a newer head of its branch,
or the branch's deletion, waits for that run to end (the older commit's run would otherwise promote after the
newer one's, or re-create an environment just removed); commits pushed meanwhile are skipped for the latest.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

import dagster as dg
from pydantic import BaseModel

from dagster_sparkmesh.dagster.branch_environments import (
    BRANCH_TAG,
    COMMIT_TAG,
    ENVIRONMENT_TAG,
    BranchEnvironments,
    branch_partitions,
)
from dagster_sparkmesh.dagster.sensor import UNFINISHED_RUNS
from dagster_sparkmesh.dates import parse_ttl
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

PARTITION_TAG = "dagster/partition"  # Dagster's tag of a partitioned run


class BranchCursor(BaseModel):
    built: dict[str, BranchHead] = {}
    """Environment → the head last requested."""
    generations: dict[str, int] = {}
    """Environment → how many times it went (deleted or merged branch)."""

    @classmethod
    def parse(cls, text: str | None) -> BranchCursor:
        return cls.model_validate_json(text) if text else cls()


class BranchStep(BaseModel):
    """What one tick does: the environments to build at their new head, those to remove, those left as they are
    while a run of theirs is queued or running, and the cursor after it."""

    to_build: list[str]
    gone: list[str]
    waiting: list[str]
    cursor: BranchCursor


def _next_step(previous: BranchCursor, live: dict[str, BranchHead], known: set[str],
               busy: dict[str, list[str]]) -> BranchStep:
    """One run per environment at a time: a new head, or the branch's deletion, waits for the environment's run
    in flight to end (it would otherwise promote an older commit after a newer one, or re-create an environment
    just removed); the cursor keeps the head last requested, so the next tick sees the change again (architecture
    invariant 17)."""
    changed = [env for env, head in live.items()
               if env not in previous.built or previous.built[env].commit != head.commit or env not in known]
    vanished = sorted((known | set(previous.built)) - set(live))
    waiting = sorted(env for env in [*changed, *vanished] if env in busy)
    gone = [env for env in vanished if env not in busy]
    generations = {**previous.generations, **{env: previous.generations.get(env, 0) + 1 for env in gone}}
    built = {env: head for env, head in live.items() if env not in waiting}
    built.update({env: previous.built[env] for env in waiting if env in previous.built})
    return BranchStep(to_build=[env for env in changed if env not in busy], gone=gone, waiting=waiting,
                      cursor=BranchCursor(built=built, generations=generations))


def sparkmesh_branch_sensor(
    *,
    project_dir: Path,
    settings: BranchEnvironments,
    served: str,
    label: str,
    branch_job: dg.UnresolvedAssetJobDefinition,
    janitor: dg.JobDefinition,
    state_url: str,
    environment_ttl: str,
) -> dg.SensorDefinition:
    """``served``: the environment of the code location (never a branch's); ``state_url`` and ``environment_ttl``:
    the checkout's store and TTL."""
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
        busy = _environments_in_flight(context, branch_job.name)
        step = _next_step(previous, live, known, busy)
        requests = [_request(branch_job.name, env, live[env], step.cursor.generations.get(env, 0)) for env in step.to_build]
        invalidated = _update_environments(project_dir, state_url, step.gone, [*live], parse_ttl(environment_ttl))
        if invalidated:
            requests.append(_janitor_request(janitor.name, invalidated, step.cursor.generations))
        forget_exports(project_dir, keep=[*(h.commit for h in live.values()), *(c for cs in busy.values() for c in cs)])
        changes = _partition_changes(partitions.name, set(live) - known, [e for e in step.gone if e in known])
        for note in notes:
            context.log.warning(f"sparkmesh: {note}")
        summary = _summary(live, step, notes)
        return dg.SensorResult(run_requests=requests, cursor=step.cursor.model_dump_json(),
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
        tags={BRANCH_TAG: head.name, COMMIT_TAG: head.commit, ENVIRONMENT_TAG: environment},
    )


def _janitor_request(job_name: str, invalidated: list[str], generations: dict[str, int]) -> dg.RunRequest:
    what = " ".join(f"{env}:{generations.get(env, 0)}" for env in invalidated)
    return dg.RunRequest(run_key=f"janitor:{hashlib.sha256(what.encode()).hexdigest()[:16]}", job_name=job_name)


def _partition_changes(name: str, added: set[str], deleted: list[str]) -> list:
    changes: list = [dg.AddDynamicPartitionsRequest(name, sorted(added))] if added else []
    return changes + ([dg.DeleteDynamicPartitionsRequest(name, deleted)] if deleted else [])


def _environments_in_flight(context: dg.SensorEvaluationContext, job_name: str) -> dict[str, list[str]]:
    """Environment → the commits its queued or running branch runs read (their exports stay; nothing else starts
    or removes the environment until they end). A person's run from the UI has no sensor tags: its partition is
    the environment, and it reads the branch's head of its start (no commit tag)."""
    runs = context.instance.get_runs(filters=dg.RunsFilter(job_name=job_name, statuses=UNFINISHED_RUNS))
    busy: dict[str, list[str]] = {}
    for run in runs:
        environment = run.tags.get(ENVIRONMENT_TAG) or run.tags.get(PARTITION_TAG)
        if environment:
            busy.setdefault(environment, []).extend([run.tags[COMMIT_TAG]] if COMMIT_TAG in run.tags else [])
    return busy


def _update_environments(project_dir: Path, state_url: str, gone: list[str], live: list[str],
                         ttl: timedelta) -> list[str]:
    """Mark the gone environments expired now, and keep the live ones from expiring while their branch lives (an
    idle branch's environment would otherwise go after ``environment_ttl``); the gone ones that existed (the
    janitor has work)."""
    with open_state_store(state_url, project_dir) as state:
        state.extend_environments(live, ttl)
        return [name for name in gone if state.invalidate_environment(name)]


def _summary(live: dict[str, BranchHead], step: BranchStep, notes: list[str]) -> str:
    parts = [f"{len(live)} branch environment(s) up to date" if live else "no branch to plan"]
    if step.gone:
        parts.append(f"removed: {', '.join(step.gone)}")
    if step.waiting:
        parts.append(f"waiting for a run to finish before changing: {', '.join(step.waiting)}")
    return "; ".join(parts + notes)
