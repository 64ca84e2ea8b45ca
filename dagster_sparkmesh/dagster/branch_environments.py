"""Branch environments in Dagster: one asset, partitioned by branch environment, whose materialization plans a
branch's head into its environment, backfills it over the preview window, promotes it and compares it with prod.

Prod's model assets are not touched: a branch's run materializes only its partition of this asset, so prod's
partition statuses stay prod's. The asset page lists the branches (its partitions); each materialization carries
the branch's plan, what it computed and its table diff against prod; an observation shows the plan as soon as the
run has made it. The branch sensor (``branch_sensor``) adds and removes partitions and requests the runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from dagster_sparkmesh.dagster.branch_markdown import audits_markdown, comparisons_markdown
from dagster_sparkmesh.dagster.markdown import plan_markdown
from dagster_sparkmesh.dagster.resource import RESOURCE_KEY, SparkMeshResource
from dagster_sparkmesh.errors import PlanError, ProjectError, SparkMeshError
from dagster_sparkmesh.execution.branch_environments import PROD, BranchBuild, branch_project, build_branch, plan_branch
from dagster_sparkmesh.execution.janitor import run_janitor
from dagster_sparkmesh.execution.results import ModelRunResult
from dagster_sparkmesh.plan.branch_names import environment_for_branch
from dagster_sparkmesh.project.commit_trees import BranchHead, branch_heads, repository_root, resolve_commit
from dagster_sparkmesh.project.records import Project

BRANCH_TAG, COMMIT_TAG, ENVIRONMENT_TAG = "sparkmesh/branch", "sparkmesh/commit", "sparkmesh/environment"


@dataclass(frozen=True)
class BranchEnvironments:
    """Which git branches get an environment of their own, and over which window they are built.

    ``branches`` / ``exclude``: branch name patterns (``*``, ``feature/*``), local and remote-tracking branches
    (``origin/feature/x`` is the branch ``feature/x``); the prod branch never has one. ``preview_start``: where a
    branch's backfill starts (``2024-01-01``, ``1 week ago``; None: each model's own start, the whole history, so
    that a merge promotes prod with nothing left to compute). ``fetch``: a remote to fetch before each tick
    (``origin``), for a checkout whose remote-tracking branches nothing else updates. ``sensor_status`` /
    ``interval_seconds``: the branch sensor's."""

    prod_branch: str = "main"
    branches: Sequence[str] = ("*",)
    exclude: Sequence[str] = ()
    preview_start: str | None = None
    fetch: str | None = None
    sensor_status: dg.DefaultSensorStatus = dg.DefaultSensorStatus.STOPPED
    interval_seconds: int = 60

    def heads(self, project_dir: Path) -> list[BranchHead]:
        root = repository_root(project_dir)
        if root is None:
            raise ProjectError(f"{project_dir} is not in a git repository", hint="branch environments follow git branches")
        return branch_heads(root, self.branches, (self.prod_branch, *self.exclude))

    def prod_ref(self) -> str:
        """What the prod branch is, where merges are looked for: the fetched remote's when there is one."""
        return f"{self.fetch}/{self.prod_branch}" if self.fetch else self.prod_branch

    @staticmethod
    def environment_of(branch: str, served: str) -> str:
        """The branch's environment: never prod's, nor the one the code location serves."""
        return environment_for_branch(branch, frozenset({PROD, served}))


def branch_partitions(label: str) -> dg.DynamicPartitionsDefinition:
    return dg.DynamicPartitionsDefinition(name=f"sparkmesh_{label}_branches")


def branch_asset_key(namespace: str | None) -> dg.AssetKey:
    return dg.AssetKey(["sparkmesh", *([namespace] if namespace else []), "branch_environments"])


def branch_environment_asset(
    checkout: Project, settings: BranchEnvironments, served: str, label: str, namespace: str | None,
    resource_key: str = RESOURCE_KEY,
) -> dg.AssetsDefinition:
    """``checkout``: the project the code location serves; ``served``: its environment (never a branch's)."""
    key = branch_asset_key(namespace)

    @dg.asset(
        key=key,
        partitions_def=branch_partitions(label),
        group_name="sparkmesh_branches",
        kinds={"spark"},
        required_resource_keys={resource_key},
        description="One partition per git branch environment: materializing one plans the branch's head into its "
        "environment, backfills what the branch changed, promotes its views and compares each changed model with "
        "prod (the materialization's metadata). Prod's assets are not touched.",
    )
    def _branch_environment(context):  # annotations stay off: Dagster inspects them, and they are strings here
        sparkmesh: SparkMeshResource = getattr(context.resources, resource_key)
        ctx = None
        try:
            head = _head(context, checkout.path, settings, served)
            ctx = sparkmesh.open_context(context.partition_key, branch_project(checkout, head))
            _start_fresh(ctx)
            plan = plan_branch(ctx, head, preview_start=settings.preview_start)
            context.log_event(dg.AssetObservation(
                asset_key=key, partition=context.partition_key,
                metadata={"status": "backfilling", "branch": head.name, "commit": head.commit, "plan_id": plan.plan_id,
                          "plan": dg.MetadataValue.md(plan_markdown(plan))},
            ))
            build = build_branch(ctx, head, plan, on_model_done=lambda result: _progress(context, result),
                                 windowed=settings.preview_start is not None)
        except SparkMeshError as error:
            raise dg.Failure(description=str(error), metadata={"error": type(error).__name__}) from None
        finally:
            if ctx is not None:
                ctx.close()
        context.log.info(f"branch {head.name} is environment {context.partition_key}: {build.intervals_computed} "
                         f"interval(s) computed, {len(build.comparisons)} model(s) compared with prod")
        return dg.MaterializeResult(metadata=build_metadata(build))

    return _branch_environment


def _head(context, project_dir: Path, settings: BranchEnvironments, served: str) -> BranchHead:
    """The branch head the sensor asked for (the run's tags), else, for a person's run from the UI, the current
    head of the branch whose environment the partition is. Refused: a partition that is no branch's environment
    (``prod``, the served one, one added by hand), a commit that is not one of the repository's."""
    partition, tags = context.partition_key, context.run.tags
    if partition in (PROD, served):
        raise PlanError(f"{partition} is not a branch environment", hint="materialize a branch's partition")
    if BRANCH_TAG in tags and COMMIT_TAG in tags:
        head = BranchHead(name=tags[BRANCH_TAG], ref=tags[BRANCH_TAG], commit=tags[COMMIT_TAG])
        root = repository_root(project_dir)
        if settings.environment_of(head.name, served) != partition or root is None \
                or resolve_commit(root, head.commit) != head.commit:
            raise PlanError(f"the run's branch {head.name!r} at {head.commit!r} does not match the partition "
                            f"{partition} and the repository", hint="let the branch sensor request branch runs")
        return head
    for head in settings.heads(project_dir):
        if settings.environment_of(head.name, served) == partition:
            return head
    raise PlanError(f"no branch of {project_dir} has the environment {partition} now",
                    hint="the branch was deleted or merged: its partition goes at the branch sensor's next tick")


def _start_fresh(ctx) -> None:
    """A branch re-created after its environment was invalidated starts from prod, not from the old one."""
    current = ctx.state.get_environment(ctx.environment)
    if current is not None and current.expires_at is not None and current.expires_at <= ctx.clock():
        run_janitor(ctx)


def _progress(context: dg.AssetExecutionContext, result: ModelRunResult) -> None:
    if result.intervals and not result.skipped:
        context.log.info(f"{result.model}: {len(result.intervals)} interval(s), {result.rows_written:,} row(s)")


def build_metadata(build: BranchBuild) -> dict[str, object]:
    changed = {c.model: list(c.changed_columns) for c in build.comparisons}
    return {
        "branch": build.branch,
        "commit": build.commit,
        "plan_id": build.plan.plan_id,
        "plan": dg.MetadataValue.md(plan_markdown(build.plan)),
        "intervals_computed": build.intervals_computed,
        "rows_written": build.rows_written,
        "changed_models": dg.MetadataValue.json(sorted({*build.plan.directly_modified, *build.plan.indirectly_modified,
                                                        *build.plan.added})),
        "changed_columns": dg.MetadataValue.json(changed),
        "table_diff": dg.MetadataValue.md(comparisons_markdown(build.comparisons)),
        "audits": dg.MetadataValue.md(audits_markdown(build.audits)),
    }


def janitor_job(label: str, resource_key: str = RESOURCE_KEY) -> dg.JobDefinition:
    """Drops what expired environments (a deleted or merged branch's) and unreferenced versions leave behind."""

    @dg.op(name=f"sparkmesh_{label}_drop_expired", required_resource_keys={resource_key})
    def _janitor(context):  # no annotation: see above
        sparkmesh: SparkMeshResource = getattr(context.resources, resource_key)
        ctx = sparkmesh.open_context("prod")
        try:
            report = run_janitor(ctx)
        finally:
            ctx.close()
        context.log.info(f"janitor: {len(report.environments_dropped)} environment(s), {len(report.views_dropped)} "
                         f"view(s), {len(report.tables_dropped)} table(s) dropped")

    @dg.job(name=f"sparkmesh_{label}_janitor")
    def _job() -> None:
        _janitor()

    return _job
