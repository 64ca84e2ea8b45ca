"""What a reviewer of a merge sees on prod's plan: the merged branch's environment against prod, as its last build
measured it (the branch environments asset's materialization of the merged commit)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from dagster_sparkmesh.dagster.branch_environments import branch_asset_key
from dagster_sparkmesh.project.commit_trees import commit_parents, repository_root

_RECENT = 100  # branch builds looked at: the merged one is among the latest


def merged_branch_review(
    instance: dg.DagsterInstance, project_dir: Path, head: str, namespace: str | None
) -> dict[str, object]:
    """The branch build whose commit ``head`` merges (or is, after a fast-forward): its branch, environment and
    table diff against prod; empty when the commit merges no built branch."""
    root = repository_root(project_dir)
    if root is None:
        return {}
    merged = [*commit_parents(root, head)[1:], head]
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=branch_asset_key(namespace)), limit=_RECENT
    ).records
    for record in records:
        materialization = record.asset_materialization
        commit = materialization.metadata.get("commit") if materialization else None
        if commit is not None and commit.value in merged:
            metadata = materialization.metadata
            return {
                "merged_branch": metadata["branch"].value,
                "merged_branch_environment": materialization.partition or "",
                "merged_branch_table_diff": metadata["table_diff"],
            }
    return {}
