"""Asset checks of external assets: the ``audits:`` of an external model, run against its table on demand.

An external asset is never materialized here, so its audits cannot ride along a step as the models' do: each
audited external gets one ``multi_asset_check`` that Dagster can run by itself (from the UI, a schedule, or a job
selecting the check). Plans run the same audits before computing the external's readers (``execution.preflight``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping

import dagster as dg

from dagster_sparkmesh.dagster.events import check_result
from dagster_sparkmesh.dagster.resource import RESOURCE_KEY
from dagster_sparkmesh.dagster.specs import audit_is_blocking, dagster_name
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.model.records import AuditDefinition, ExternalModel
from dagster_sparkmesh.project.records import Project


def external_check_specs(
    external: ExternalModel, translator: SparkMeshTranslator, audits: Mapping[str, AuditDefinition]
) -> list[dg.AssetCheckSpec]:
    key = translator.get_asset_key(external)
    return [
        dg.AssetCheckSpec(
            name=translator.get_check_name(external, index),  # type: ignore[arg-type]  # it reads only .audits
            asset=key,
            blocking=audit_is_blocking(call, audits),
            description=f"audit {call.name}({', '.join(f'{name} := {value}' for name, value in call.args)})",
        )
        for index, call in enumerate(external.audits)
    ]


def external_audit_checks(
    project: Project,
    translator: SparkMeshTranslator,
    environment: str,
    skip_external_keys: Collection[dg.AssetKey] = (),
    resource_key: str = RESOURCE_KEY,
    label: str | None = None,
) -> list[dg.AssetChecksDefinition]:
    """One check definition per audited external model of this code location; ``label`` names them (default: the
    environment's)."""
    return [
        _checks_of(project, external, translator, environment, resource_key, label or dagster_name(environment))
        for external in project.external_models.values()
        if external.audits and translator.get_asset_key(external) not in set(skip_external_keys)
    ]


def _checks_of(
    project: Project, external: ExternalModel, translator: SparkMeshTranslator, environment: str, resource_key: str,
    label: str,
) -> dg.AssetChecksDefinition:
    specs = external_check_specs(external, translator, project.audits)

    @dg.multi_asset_check(
        specs=specs,
        name=f"sparkmesh_{label}_audit_{dagster_name(external.name)}",
        required_resource_keys={resource_key},
        can_subset=True,
    )
    def _audit(context) -> Iterator[dg.AssetCheckResult]:  # unannotated: Dagster reads the annotation eagerly
        from dagster_sparkmesh.execution.audits import run_audits

        ctx = getattr(context.resources, resource_key).open_context(environment, project)
        try:
            results = run_audits(ctx, external, external.name)  # type: ignore[arg-type]  # it reads only .audits
        finally:
            ctx.close()
        selected = set(context.selected_asset_check_keys)
        for result, spec in zip(results, specs):
            if spec.key in selected:
                yield check_result(result, spec.key)

    return _audit
