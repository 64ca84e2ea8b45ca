"""The branch sensor: every branch the settings name gets a partition of the branch environments asset and a run
per new head commit; a branch deleted, or merged into the prod branch, loses its partition, its environment is
invalidated and the janitor job drops its views (its tables follow once no environment reads them, after the
snapshot TTL). The working tree the code location serves is never touched (heads are read with ``git``).

Cursor: environment → the branch and the head commit last requested for it (run keys make a repeated request a
no-op, so a lost cursor costs nothing but a tick).
"""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from dagster_sparkmesh.dagster.branch_environments import BRANCH_TAG, COMMIT_TAG, BranchEnvironments, branch_partitions
from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.plan.branch_names import environment_for_branch
from dagster_sparkmesh.project.commit_trees import (
    BranchHead,
    fetch_remote,
    forget_exports,
    is_ancestor,
    repository_root,
    resolve_commit,
)
from dagster_sparkmesh.state.store import open_state_store


def sparkmesh_branch_sensor(
    *,
    project_dir: Path,
    settings: BranchEnvironments,
    label: str,
    branch_job: dg.UnresolvedAssetJobDefinition,
    janitor: dg.JobDefinition,
    state_url: str | None,
    state_url_of_project: str,
) -> dg.SensorDefinition:
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
        previous: dict[str, dict[str, str]] = json.loads(context.cursor) if context.cursor else {}
        fetch_failed = fetch_remote(root, settings.fetch) if settings.fetch else None
        if fetch_failed:
            context.log.warning(f"sparkmesh: could not fetch {settings.fetch}, using the refs as they are: {fetch_failed}")
        live, refused = _live_heads(root, settings)
        known = set(context.instance.get_dynamic_partitions(partitions.name))
        requests = [_request(branch_job.name, env, head) for env, head in live.items()
                    if previous.get(env, {}).get("commit") != head.commit]
        gone = sorted((known | set(previous)) - set(live))
        invalidated = _invalidate(project_dir, state_url or state_url_of_project, gone)
        if invalidated:
            requests.append(dg.RunRequest(run_key=f"janitor:{':'.join(invalidated)}:{context.cursor or ''}"[:500],
                                          job_name=janitor.name))
            forget_exports(project_dir, keep=[head.commit for head in live.values()])
        cursor = {env: {"branch": head.name, "commit": head.commit} for env, head in live.items()}
        changes = [
            *([dg.AddDynamicPartitionsRequest(partitions.name, sorted(set(live) - known))] if set(live) - known else []),
            *([dg.DeleteDynamicPartitionsRequest(partitions.name, [e for e in gone if e in known])]
              if any(e in known for e in gone) else []),
        ]
        summary = _summary(live, requests, gone, refused)
        return dg.SensorResult(run_requests=requests, cursor=json.dumps(cursor, sort_keys=True),
                               dynamic_partitions_requests=changes, skip_reason=None if requests else summary)

    return _sensor


def _live_heads(root: Path, settings: BranchEnvironments) -> tuple[dict[str, BranchHead], list[str]]:
    """Environment → branch head, for the branches not merged into the prod branch; the names refused, with why."""
    prod = resolve_commit(root, settings.prod_branch)
    live: dict[str, BranchHead] = {}
    refused: list[str] = []
    for head in settings.heads(root):
        if prod is not None and is_ancestor(root, head.commit, prod):
            continue  # merged (or not diverged yet): prod serves it
        try:
            live[environment_for_branch(head.name)] = head
        except SparkMeshError as error:
            refused.append(f"{head.name!r}: {error}")
    return live, refused


def _request(job_name: str, environment: str, head: BranchHead) -> dg.RunRequest:
    return dg.RunRequest(
        run_key=f"{environment}:{head.commit}", job_name=job_name, partition_key=environment,
        tags={BRANCH_TAG: head.name, COMMIT_TAG: head.commit, "sparkmesh/environment": environment},
    )


def _invalidate(project_dir: Path, state_url: str, environments: list[str]) -> list[str]:
    """Mark the environments expired now; the ones that existed (the janitor has work)."""
    if not environments:
        return []
    with open_state_store(state_url, project_dir) as state:
        return [name for name in environments if state.invalidate_environment(name)]


def _summary(live: dict[str, BranchHead], requests: list[dg.RunRequest], gone: list[str], refused: list[str]) -> str:
    parts = [f"{len(live)} branch environment(s) up to date" if live else "no branch to plan"]
    if gone:
        parts.append(f"removed: {', '.join(gone)}")
    if refused:
        parts.append(f"refused: {'; '.join(refused)}")
    return "; ".join(parts)
