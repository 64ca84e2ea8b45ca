"""The pure spec builder: a loaded project → Dagster asset and check specs, grouped into multi-assets.

Nothing here touches Spark or the state store, so building the definitions of a large project stays fast.
Models that share a partitions definition (and batch size) are computed by one multi-asset: Dagster can only
run assets of one partitions definition in a single run, and within it our scheduler orders the models itself.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import dagster as dg

from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.model.kinds import MATERIALIZED_KINDS
from dagster_sparkmesh.model.records import AuditCall, AuditDefinition, Model
from dagster_sparkmesh.project.records import Project

_OP_NAME_CHARS = re.compile(r"[^a-z0-9_]")


@dataclass(frozen=True)
class SpecGroup:
    """The models one multi-asset computes: same partitions definition, same backfill policy."""

    name: str
    partitions_def: dg.PartitionsDefinition | None
    backfill_policy: dg.BackfillPolicy
    specs: tuple[dg.AssetSpec, ...]
    check_specs: tuple[dg.AssetCheckSpec, ...]


@dataclass(frozen=True)
class SparkMeshSpecs:
    environment: str
    groups: tuple[SpecGroup, ...]
    external_specs: tuple[dg.AssetSpec, ...]
    key_by_model: Mapping[str, dg.AssetKey]
    """Model name → asset key, for every model asset."""
    check_keys: Mapping[str, tuple[dg.AssetCheckKey, ...]] = field(default_factory=dict)
    """Model name → the check key of each of its audits, in the order of ``Model.audits``."""

    @property
    def model_by_key(self) -> dict[dg.AssetKey, str]:
        return {key: name for name, key in self.key_by_model.items()}

    @property
    def model_specs(self) -> tuple[dg.AssetSpec, ...]:
        return tuple(spec for group in self.groups for spec in group.specs)

    @property
    def check_specs(self) -> tuple[dg.AssetCheckSpec, ...]:
        return tuple(check for group in self.groups for check in group.check_specs)

    def group_of(self, model_name: str) -> SpecGroup:
        key = self.key_by_model[model_name]
        return next(group for group in self.groups if any(spec.key == key for spec in group.specs))


def build_sparkmesh_specs(
    project: Project,
    translator: SparkMeshTranslator | None = None,
    environment: str = "prod",
    *,
    skip_external_keys: Collection[dg.AssetKey] = (),
) -> SparkMeshSpecs:
    """One AssetSpec per materialized model, one per external model, one AssetCheckSpec per audit.

    ``skip_external_keys``: external models another code location already defines as assets; they stay
    dependencies (so lineage crosses locations) but get no spec here.
    """
    translator = translator or SparkMeshTranslator()
    models = {name: model for name, model in project.models.items() if model.kind_name in MATERIALIZED_KINDS}
    default_start = project.config.model_defaults.start
    grouped: dict[tuple[object, int | None], list[tuple[dg.AssetSpec, list[dg.AssetCheckSpec]]]] = {}
    key_by_model: dict[str, dg.AssetKey] = {}
    check_keys: dict[str, tuple[dg.AssetCheckKey, ...]] = {}
    for name, model in models.items():
        partitions_def = translator.get_partitions_def(model, default_start)
        spec = _model_spec(project, model, translator, environment, partitions_def)
        checks = _check_specs(model, spec.key, translator, project.audits)
        key_by_model[name] = spec.key
        check_keys[name] = tuple(check.key for check in checks)
        batch_size = getattr(model.kind, "batch_size", None) if partitions_def is not None else None
        grouped.setdefault((partitions_def, batch_size), []).append((spec, checks))
    groups = tuple(
        SpecGroup(
            name=_group_name(environment, partitions_def, batch_size),
            partitions_def=partitions_def,
            backfill_policy=dg.BackfillPolicy.multi_run(batch_size) if batch_size else dg.BackfillPolicy.single_run(),
            specs=tuple(spec for spec, _ in members),
            check_specs=tuple(check for _, checks in members for check in checks),
        )
        for (partitions_def, batch_size), members in grouped.items()
    )
    external_specs = tuple(
        spec
        for spec in (_external_spec(external, translator, environment) for external in project.external_models.values())
        if spec.key not in set(skip_external_keys)
    )
    return SparkMeshSpecs(environment, groups, external_specs, key_by_model, check_keys)


def _model_spec(
    project: Project,
    model: Model,
    translator: SparkMeshTranslator,
    environment: str,
    partitions_def: dg.PartitionsDefinition | None,
) -> dg.AssetSpec:
    return dg.AssetSpec(
        key=translator.get_asset_key(model),
        deps=[_dep_key(project, parent, translator) for parent in sorted(_asset_parents(project, model))],
        description=translator.get_description(model),
        metadata=translator.get_metadata(model, environment),
        skippable=True,
        group_name=translator.get_group_name(model),
        code_version=translator.get_code_version(model),
        automation_condition=translator.get_automation_condition(model),
        owners=translator.get_owners(model),
        tags=translator.get_tags(model),
        kinds=translator.get_kinds(model),
        partitions_def=partitions_def,
    )


def _asset_parents(project: Project, model: Model) -> set[str]:
    """The model's parents that are assets: embedded models are inlined, so depend on what they read instead."""
    parents: set[str] = set()
    stack = list(model.depends_on)
    seen: set[str] = set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        parent = project.models.get(name)
        if parent is not None and parent.kind_name not in MATERIALIZED_KINDS:
            stack.extend(parent.depends_on)
        elif parent is not None or name in project.external_models:
            parents.add(name)
    return parents


def _dep_key(project: Project, name: str, translator: SparkMeshTranslator) -> dg.AssetKey:
    return translator.get_asset_key(project.models.get(name) or project.external_models[name])


def _external_spec(external, translator: SparkMeshTranslator, environment: str) -> dg.AssetSpec:
    """External models are plain specs: Dagster shows them in lineage but never materializes them."""
    return dg.AssetSpec(
        key=translator.get_asset_key(external),
        description=translator.get_description(external),
        metadata=translator.get_metadata(external, environment),
        group_name=translator.get_group_name(external),
        kinds=translator.get_kinds(external),
    )


def _check_specs(
    model: Model,
    key: dg.AssetKey,
    translator: SparkMeshTranslator,
    audits: Mapping[str, AuditDefinition],
) -> list[dg.AssetCheckSpec]:
    return [
        dg.AssetCheckSpec(
            name=translator.get_check_name(model, index),
            asset=key,
            blocking=audit_is_blocking(call, audits),
            description=_describe(call),
        )
        for index, call in enumerate(model.audits)
    ]


def audit_is_blocking(call: AuditCall, audits: Mapping[str, AuditDefinition]) -> bool:
    """A custom audit's own ``blocking`` setting applies unless the call asks for ``_non_blocking``."""
    custom = audits.get(call.base_name)
    if custom is not None and not call.name.endswith("_non_blocking"):
        return custom.blocking
    return call.blocking


def _describe(call: AuditCall) -> str:
    args = ", ".join(f"{name} := {value}" for name, value in call.args)
    return f"audit {call.name}({args})"


def _group_name(environment: str, partitions_def: dg.PartitionsDefinition | None, batch_size: int | None) -> str:
    """A stable op name per group, readable for the common cases."""
    if partitions_def is None:
        return f"sparkmesh_{environment}_unpartitioned"
    if isinstance(partitions_def, dg.TimeWindowPartitionsDefinition):
        label = f"{partitions_def.cron_schedule}_{partitions_def.start:%Y%m%d%H%M}"
    else:
        label = str(partitions_def)
    digest = hashlib.sha256(label.encode()).hexdigest()[:8]
    readable = _OP_NAME_CHARS.sub("_", _cadence(partitions_def))
    suffix = f"_batch{batch_size}" if batch_size else ""
    return f"sparkmesh_{environment}_{readable}_{digest}{suffix}"


def _cadence(partitions_def: dg.PartitionsDefinition) -> str:
    names = {
        dg.HourlyPartitionsDefinition: "hourly",
        dg.DailyPartitionsDefinition: "daily",
        dg.WeeklyPartitionsDefinition: "weekly",
        dg.MonthlyPartitionsDefinition: "monthly",
    }
    return names.get(type(partitions_def), "cron")
