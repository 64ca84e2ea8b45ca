"""What a reviewer of a merge sees on prod's plan: the merged branch's environment against prod, as its last build
measured it (the branch environments asset's materialization of the merged commit, or of a commit with the same
files, or the same changes, when the branch was squashed or rebased onto prod)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from dagster_sparkmesh.dagster.branch_environments import branch_asset_key
from dagster_sparkmesh.project.commit_trees import commit_parents, commit_trees, repository_root, squashed_branch

_RECENT = 100  # branch builds looked at: the merged one is among the latest


def merged_branch_review(
    instance: dg.DagsterInstance, project_dir: Path, head: str, namespace: str | None
) -> dict[str, object]:
    """The branch build that ``head`` merges: a parent of the merge commit, the commit itself (a fast-forward), a
    commit with the very same files (a squash or rebase merge of a branch up to date with prod), or a branch's
    latest build whose changes are the squash's (a branch behind prod); its branch, environment and table diff
    against prod. Empty when the commit merges no built branch."""
    root = repository_root(project_dir)
    if root is None:
        return {}
    merged = {*commit_parents(root, head)[1:], head}
    builds = [record.asset_materialization for record in instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=branch_asset_key(namespace)), limit=_RECENT).records]
    builds = [build for build in builds if build is not None and {"commit", "branch"} <= build.metadata.keys()]
    commits = [str(build.metadata["commit"].value) for build in builds]
    found = next((build for build, commit in zip(builds, commits) if commit in merged), None)
    if found is None:  # no parent: a squash or rebase merge; the same files, of another branch too, are the same diff
        trees = commit_trees(root, [head, *commits])
        found = next((build for build, commit in zip(builds, commits)
                      if head in trees and trees.get(commit) == trees[head]), None)
    if found is None:  # a squash of a branch behind prod: the same changes, onto newer files
        latest = {str(build.metadata["branch"].value): (build, commit) for build, commit in reversed(list(zip(builds, commits)))}
        squashed = squashed_branch(root, head, [commit for _, commit in latest.values()])
        found = next((build for build, commit in latest.values() if commit == squashed), None)
    if found is None:
        return {}
    return {
        "merged_branch": found.metadata["branch"].value,
        "merged_branch_environment": found.partition or "",
        "merged_branch_table_diff": found.metadata["table_diff"],
    }
