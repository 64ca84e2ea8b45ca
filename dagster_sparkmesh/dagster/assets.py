"""``sparkmesh_assets``: one multi-asset per partitions definition, whose step runs the selected models.

A step computes its selected models over the run's partition range in one go (one Spark job per model and range,
not one per partition), in DAG order. Dagster stops only *later* steps after a failed blocking check, so the
executor stops the failing model's descendants inside the step and the step then fails with the findings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import datetime

import dagster as dg

from dagster_sparkmesh.dagster.events import check_results
from dagster_sparkmesh.dagster.partitions import to_interval
from dagster_sparkmesh.dagster.resource import RESOURCE_KEY, SparkMeshResource
from dagster_sparkmesh.dagster.specs import (
    SparkMeshSpecs,
    SpecGroup,
    build_sparkmesh_specs,
)
from dagster_sparkmesh.dagster.step_report import StepReport, unfinished_failure
from dagster_sparkmesh.dagster.restatement import (
    RESTATED_READERS_TAG,
    readers_elsewhere,
    restated,
    restatement_lines,
    run_restatement,
)
from dagster_sparkmesh.dagster.run_log import step_started
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.execution.abort import ApplyAborted, run_until_stopped
from dagster_sparkmesh.execution.apply import backfill_window
from dagster_sparkmesh.execution.backfill import BackfillFailed
from dagster_sparkmesh.execution.plans import PLAN_ID_TAG, plan_for_run
from dagster_sparkmesh.execution.writes.commit import audit_results_of
from dagster_sparkmesh.project.records import Project


def sparkmesh_assets(
    *,
    project: Project,
    environment: str = "prod",
    translator: SparkMeshTranslator | None = None,
    backfill_policy: dg.BackfillPolicy | None = None,
    specs: SparkMeshSpecs | None = None,
    retry_policy: dg.RetryPolicy | None = None,
    resource_key: str = RESOURCE_KEY,
) -> list[dg.AssetsDefinition]:
    """The model assets of ``project`` for ``environment``; they need a SparkMeshResource under ``resource_key``.

    ``backfill_policy`` replaces the per-group default (single run, or multi-run of a model's batch size).
    ``retry_policy``: Dagster re-runs a failed step (its completed intervals are not recomputed); transient Spark
    failures are already retried inside the step, so this is for whatever outlives those retries.
    """
    translator = translator or SparkMeshTranslator()
    specs = specs or build_sparkmesh_specs(project, translator, environment)
    names = _op_names(specs, translator)
    policies = (backfill_policy, retry_policy)
    return [_group_asset(group, names[group.name], specs, project, translator, policies, resource_key)
            for group in specs.groups]


def _op_names(specs: SparkMeshSpecs, translator: SparkMeshTranslator) -> dict[str, str]:
    """The translator's op name per group; a name several groups got is suffixed with each one's default name."""
    chosen = {group.name: translator.get_op_name(group.name) for group in specs.groups}
    taken = Counter(chosen.values())
    return {group: name if taken[name] == 1 else f"{name}_{group}" for group, name in chosen.items()}


def _group_asset(
    group: SpecGroup,
    op_name: str,
    specs: SparkMeshSpecs,
    project: Project,
    translator: SparkMeshTranslator,
    policies: tuple[dg.BackfillPolicy | None, dg.RetryPolicy | None],
    resource_key: str,
) -> dg.AssetsDefinition:
    backfill_policy, retry_policy = policies

    @dg.multi_asset(
        name=op_name,
        specs=list(group.specs),
        check_specs=list(group.check_specs),
        can_subset=True,
        partitions_def=group.partitions_def,
        backfill_policy=backfill_policy or group.backfill_policy,
        retry_policy=retry_policy,
        op_tags=translator.get_op_tags(group.name),
        pool=translator.get_pool(group.name),
        required_resource_keys={resource_key},
    )
    def _models(context):  # annotations stay off: Dagster inspects them, and they are strings here
        yield from run_group(context, getattr(context.resources, resource_key), project, specs, translator)

    return _models


def run_group(
    context: dg.AssetExecutionContext,
    sparkmesh: SparkMeshResource,
    project: Project,
    specs: SparkMeshSpecs,
    translator: SparkMeshTranslator,
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    model_by_key = specs.model_by_key
    names = [model_by_key[key] for key in context.selected_asset_keys if key in model_by_key]
    start, end = _window(context)
    partitions = list(context.partition_keys) if start is not None else []
    ctx = sparkmesh.open_context(specs.environment, project)
    report = StepReport(context, ctx, project, specs, translator, partitions)
    step = context.op_execution_context.op.name
    log = {"dagster_run": context.run.run_id, "step": step, "partitions": _span(partitions)}
    try:
        restate = run_restatement(context.run, context.selected_asset_keys, specs, (start, end))
        plan = plan_for_run(ctx, context.run.tags.get(PLAN_ID_TAG), context.run.run_id, restate)
        context.log.info(step_started(names, specs.environment, partitions))
        _announce_restatement(context, restated(plan, ctx.state), names, specs.environment)
        context.log.debug(f"sparkmesh: executing plan {plan.plan_id}")
        applied = run_until_stopped(
            lambda stop: backfill_window(
                ctx, plan, names, start, end, on_model_done=report.log_done, should_stop=stop, log=log
            ),
            interrupts=(dg.DagsterExecutionInterruptedError, KeyboardInterrupt),
            on_stop=lambda: context.log.warning("sparkmesh: run terminated; stopping after the models in progress"),
        )
        # Events while Spark is still open: row counts per partition and re-evaluated checks read the tables.
        yield from report.events(list(applied.models))
        if report.unfinished:
            raise unfinished_failure(report.unfinished)
    except ApplyAborted as aborted:
        yield from report.events(aborted.results, recheck=False)
        raise dg.DagsterExecutionInterruptedError(str(aborted)) from aborted
    except BackfillFailed as failure:
        yield from report.events(failure.results)
        yield from report.recorded_of_failed({name: v for name in failure.errors if (v := plan.version_of(name))})
        yield from _failed_checks(context, specs, failure)
        raise _step_failure(failure) from failure
    except SparkMeshError as error:
        # The message says what is wrong and what to do; the core's stack would bury it in the run log.
        raise dg.Failure(description=str(error), metadata={"error": type(error).__name__}) from None
    finally:
        ctx.close()


def _announce_restatement(context: dg.AssetExecutionContext, restatements, names: list[str], environment: str) -> None:
    """The restatement in the run log; a tag on the run when readers outside the step are left to compute, so that
    the restated readers' sensor requests their runs once this run succeeds."""
    for line in restatement_lines(restatements, names):
        context.log.info(line)
    if readers_elsewhere(restatements, names):
        context.instance.add_run_tags(context.run.run_id, {RESTATED_READERS_TAG: environment})


def _span(partitions: list[str]) -> str:
    return f"{partitions[0]}..{partitions[-1]}" if partitions else "unpartitioned"


def _window(context: dg.AssetExecutionContext) -> tuple[datetime | None, datetime | None]:
    """The run's partition range as naive UTC, or no bounds for an unpartitioned step."""
    if not context.has_partition_key and not context.has_partition_key_range:
        return None, None
    interval = to_interval(context.partition_time_window)
    return interval.start, interval.end


def _failed_checks(
    context: dg.AssetExecutionContext, specs: SparkMeshSpecs, failure: BackfillFailed
) -> Iterator[dg.AssetCheckResult]:
    selected = set(context.selected_asset_check_keys)
    for name, error in failure.errors.items():
        yield from check_results(audit_results_of(error), specs.check_keys.get(name, ()), selected)


def _step_failure(failure: BackfillFailed) -> dg.Failure:
    findings = {name: str(error) for name, error in failure.errors.items()}
    return dg.Failure(
        description=str(failure),
        metadata={
            "failed_models": dg.MetadataValue.json(findings),
            "not_run_downstream": dg.MetadataValue.json(failure.blocked),
        },
    )
