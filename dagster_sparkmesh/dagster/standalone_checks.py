"""Standalone audits as asset checks: each on the last (in DAG order) of the tables it reads, depending on the others.

A Dagster check belongs to one asset; ``additional_deps`` makes the others its upstream too, so a run that
materializes them runs the check after all of them. One ``multi_asset_check`` holds every standalone audit: its
step loads the run's plan once (the tables its models are computed into, as the model steps do) and runs the
selected audits there. The promotion runs the plan's standalone audits again before any view moves.
"""

from __future__ import annotations

import dagster as dg

from dagster_sparkmesh.dagster.events import check_result
from dagster_sparkmesh.dagster.resource import RESOURCE_KEY
from dagster_sparkmesh.dagster.specs import dagster_name
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.model.standalone_audit import StandaloneAudit
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.project.checks.standalone_audits import tables_read


def standalone_check_specs(
    project: Project, translator: SparkMeshTranslator, asset_names: frozenset[str]
) -> dict[str, dg.AssetCheckSpec]:
    """Audit name → its check; ``asset_names``: the models and externals that are assets of this code location."""
    specs = {}
    for audit in project.standalone_audits.values():
        keys = _keys_read(project, translator, audit, asset_names)
        if audit.skip or not keys:
            continue
        specs[audit.name] = dg.AssetCheckSpec(
            name=dagster_name(audit.name),
            asset=keys[-1],
            additional_deps=keys[:-1],
            blocking=audit.blocking,
            description=audit.description or f"standalone audit {audit.name} ({audit.path.name})",
        )
    return specs


def _keys_read(
    project: Project, translator: SparkMeshTranslator, audit: StandaloneAudit, asset_names: frozenset[str]
) -> list[dg.AssetKey]:
    """The asset keys of the tables the audit reads: externals first, then models in DAG order (the last is the
    target: by then every other one is computed)."""
    read = tables_read(audit, asset_names.__contains__, lambda name: _parents(project, name))
    externals = sorted(name for name in read if name not in project.models)
    models = [name for name in project.models if name in read]
    return [translator.get_asset_key(project.models.get(name) or project.external_models[name])
            for name in [*externals, *models]]


def _parents(project: Project, name: str) -> frozenset[str]:
    model = project.models.get(name)
    return model.depends_on if model is not None else frozenset()


def standalone_audit_checks(
    project: Project,
    translator: SparkMeshTranslator,
    environment: str,
    asset_names: frozenset[str],
    resource_key: str = RESOURCE_KEY,
    label: str | None = None,
) -> list[dg.AssetChecksDefinition]:
    """One check definition for every standalone audit of the project (none without any); ``label`` names it
    (default: the environment's)."""
    specs = standalone_check_specs(project, translator, asset_names)
    if not specs:
        return []
    names = {spec.key: name for name, spec in specs.items()}

    @dg.multi_asset_check(
        specs=list(specs.values()),
        name=f"sparkmesh_{label or dagster_name(environment)}_standalone_audits",
        required_resource_keys={resource_key},
        can_subset=True,
    )
    def _audits(context):  # annotations stay off: Dagster inspects them, and they are strings here
        chosen = set(context.selected_asset_check_keys)
        selected = [spec.key for spec in specs.values() if spec.key in chosen]
        resource = getattr(context.resources, resource_key)
        results = _evaluate(context, resource, project, environment, [names[key] for key in selected])
        for key, result in zip(selected, results):
            yield check_result(result, key)

    return [_audits]


def _evaluate(context: dg.AssetCheckExecutionContext, resource, project: Project, environment: str, names: list[str]):
    from dagster_sparkmesh.execution.plans import PLAN_ID_TAG, plan_for_run
    from dagster_sparkmesh.execution.standalone_audits import evaluate_standalone_audits

    ctx = resource.open_context(environment, project)
    try:
        # The run's plan, as its model steps use: the audit reads the tables they computed into.
        plan = plan_for_run(ctx, context.run.tags.get(PLAN_ID_TAG), context.run.run_id)
        return evaluate_standalone_audits(ctx, plan, names)
    except SparkMeshError as error:
        raise dg.Failure(description=str(error), metadata={"error": type(error).__name__}) from error
    finally:
        ctx.close()
