"""The promotion asset of an environment: the virtual update, as one unpartitioned Dagster asset.

It depends on every model asset (all partitions of the partitioned ones), and its automation condition holds it
back until no upstream partition is missing, in progress or failed. Dagster's view of completeness is only a gate:
the step re-verifies every interval and physical table in the state store and the catalog before touching a view.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import dagster as dg

from dagster_sparkmesh.dagster.broken_assets import broken_summary
from dagster_sparkmesh.dagster.markdown import changes_markdown
from dagster_sparkmesh.dagster.resource import RESOURCE_KEY, SparkMeshResource
from dagster_sparkmesh.dagster.specs import SparkMeshSpecs, promotion_key  # noqa: F401 - promotion_key: re-exported
from dagster_sparkmesh.errors import SparkMeshError, StateConflictError
from dagster_sparkmesh.execution.apply import promote_plan
from dagster_sparkmesh.execution.plans import PLAN_ID_TAG, plan_to_promote
from dagster_sparkmesh.execution.promotion import MissingIntervals, promoted_by_another
from dagster_sparkmesh.execution.results import PromotionResult
from dagster_sparkmesh.project.records import Project


def promotion_condition() -> dg.AutomationCondition:
    """Promote once every upstream partition exists and something upstream changed since the last promotion."""
    AC = dg.AutomationCondition
    return (
        ~AC.any_deps_missing()
        & ~AC.any_deps_in_progress()
        & ~AC.any_deps_match(AC.execution_failed())
        # A backfill that includes the promotion ("Materialize all") promotes by itself: not a second time here.
        & ~AC.in_progress()
        & AC.any_deps_updated().since_last_handled()
    ).with_label("all upstream partitions complete")


def promotion_asset(
    project: Project,
    specs: SparkMeshSpecs,
    *,
    automation_condition: dg.AutomationCondition | None = None,
    automatic: bool = True,
    resource_key: str = RESOURCE_KEY,
) -> dg.AssetsDefinition:
    """``automatic``: promote by the default automation condition once every upstream partition is materialized;
    False (an environment whose promotion waits for approval): only ``automation_condition`` or a person."""
    environment = specs.environment
    condition = automation_condition or (promotion_condition() if automatic else None)
    deps = [
        dg.AssetDep(spec.key, partition_mapping=dg.AllPartitionMapping() if spec.partitions_def else None)
        for spec in specs.model_specs
    ]

    @dg.asset(
        key=specs.promotion_key,
        deps=deps,
        group_name="sparkmesh",
        kinds={"spark"},
        description=_description(environment, specs.label, condition is not None),
        automation_condition=condition,
        required_resource_keys={resource_key},
    )
    def _promote(context):  # annotations stay off: Dagster inspects them, and they are strings here
        if project.broken:  # a plan of the loaded models would drop the broken ones' views from the environment
            raise dg.Failure(description=broken_summary(project), allow_retries=False)
        sparkmesh: SparkMeshResource = getattr(context.resources, resource_key)
        ctx = sparkmesh.open_context(environment, project)
        plan = None
        try:
            plan = plan_to_promote(ctx, context.run.tags.get(PLAN_ID_TAG))
            result = promote_plan(ctx, plan, log={"dagster_run": context.run.run_id})
        except MissingIntervals as missing:
            # A refusal is an answer, not a crash: `from None` keeps the core's stack out of the run log.
            raise refusal(missing, failed_audits(context.instance, specs, missing.missing)) from None
        except StateConflictError as conflict:
            if plan is None or not promoted_by_another(ctx, plan):
                raise dg.Failure(description=str(conflict), metadata={"error": type(conflict).__name__}) from None
            context.log.info(f"{environment} was promoted to plan {plan.plan_id} by a concurrent run of the same plan")
            return dg.MaterializeResult(metadata={"plan_id": plan.plan_id, "views_changed": 0,
                                                  "promoted_by": "a concurrent promotion of the same plan"})
        except SparkMeshError as error:
            raise dg.Failure(description=str(error), metadata={"error": type(error).__name__}) from None
        finally:
            ctx.close()
        context.log.info(f"promoted {environment}: {len(result.views)} view(s) changed")
        return dg.MaterializeResult(metadata={**promotion_metadata(result), "changes": dg.MetadataValue.md(changes_markdown(plan))})

    return _promote


def _description(environment: str, label: str, automatic: bool) -> str:
    what = f"Point the `{environment}` views at the physical tables of the current project (virtual update). "
    if automatic:
        return what + (
            "Launched automatically once every upstream partition is materialized: its automation condition runs in "
            f"the `sparkmesh_{label}_automation` sensor that `build_sparkmesh_definitions` ships."
        )
    return what + (
        "Waits for approval: the git sensor backfills a commit's plan and shows it here (Events: the plan's "
        "observations); materializing this asset approves the plan and promotes it."
    )


def failed_audits(instance: dg.DagsterInstance, specs: SparkMeshSpecs, models: Collection[str]) -> list[str]:
    """The blocking audits whose latest evaluation failed, on the models a promotion lacks intervals of: the usual
    root cause of the gap (the step stopped the audited model and its descendants)."""
    keys = [key for name in models for key in specs.check_keys.get(name, ())]
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(keys) if keys else {}
    found = []
    for key, record in latest.items():
        evaluation = record.event.asset_check_evaluation if record.event else None
        if evaluation is None or evaluation.passed or evaluation.severity != dg.AssetCheckSeverity.ERROR:
            continue
        rows = evaluation.metadata.get("failing_rows")
        counted = f", {rows.value} failing row(s)" if rows is not None else ""
        found.append(f"blocking audit {key.name} of {key.asset_key.to_user_string()} failed (run {record.run_id[:8]}{counted})")
    return sorted(found)


def refusal(missing: MissingIntervals, causes: Sequence[str] = ()) -> dg.Failure:
    """The step failure of an early promotion: the root cause first (failed audits), then which models and which
    gap, what to do; no view was changed."""
    cause = "; ".join(causes)
    return dg.Failure(
        description=f"{cause}: {missing}" if cause else str(missing),
        metadata={
            "models": dg.MetadataValue.json(sorted(missing.missing)),
            "missing_intervals": dg.MetadataValue.json(missing.missing),
            "what_to_do": missing.hint or "",
        },
        allow_retries=False,
    )


def promotion_metadata(result: PromotionResult) -> dict[str, object]:
    views = "\n".join(f"| {v.action} | `{v.view}` | `{v.target}` |" for v in result.views)
    return {
        "plan_id": result.plan_id,
        "previous_plan_id": result.previous_plan_id or "",
        "views_changed": len(result.views),
        "views": dg.MetadataValue.md(f"| action | view | target |\n|---|---|---|\n{views}" if views else "no view changed"),
        "snapshots": dg.MetadataValue.json(list(result.snapshots)),
        "plan": dg.MetadataValue.md(f"```\n{result.summary}\n```"),
    }
