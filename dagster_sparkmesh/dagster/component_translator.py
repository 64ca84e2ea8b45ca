"""The Component's translator: the default one, then the ``translation`` of ``defs.yaml`` (templated per model)
and its ``op`` settings. Keys go through the translation too, so that every part of the definitions (deps, checks,
the sensor's requests, the promotion) names a model's asset the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg
from dagster.components.resolved.core_models import OpSpec
from dagster.components.utils.translation import TranslationFn

from dagster_sparkmesh.dagster.translator import SparkMeshTranslator, SparkMeshTranslatorSettings
from dagster_sparkmesh.model.records import ExternalModel, Model
from dagster_sparkmesh.snapshot.naming import split_model_name


def template_data(model: Model) -> dict[str, Any]:
    """What a ``translation`` template sees of a model as ``node``."""
    schema, table = split_model_name(model.name, model.catalog)
    return {
        "name": model.name,
        "schema": schema,
        "table": table,
        "kind": model.kind_name,
        "cron": model.cron,
        "cron_tz": model.cron_tz or "UTC",
        "tags": list(model.tags),
        "owner": model.owner,
        "description": model.description,
        "path": str(model.path),
        "fingerprint": model.fingerprint,
    }


class ComponentTranslator(SparkMeshTranslator):
    def __init__(
        self,
        settings: SparkMeshTranslatorSettings,
        translation: TranslationFn[Mapping[str, Any]] | None = None,
        op: OpSpec | None = None,
    ) -> None:
        super().__init__(settings)
        self.translation = translation
        self.op = op
        self._keys: dict[tuple[str, str], dg.AssetKey] = {}  # (model, fingerprint): the sensor reloads the project

    def get_asset_key(self, model: Model | ExternalModel) -> dg.AssetKey:
        base = super().get_asset_key(model)
        if self.translation is None or not isinstance(model, Model):
            return base
        cached = (model.name, model.fingerprint)
        if cached not in self._keys:
            # The key alone, from a spec of the cheap attributes (a template may read the group, tags or kinds); a
            # key template reading anything else is caught when the full spec's key differs (``_final_spec``).
            spec = dg.AssetSpec(key=base, group_name=self.get_group_name(model), tags=self.get_tags(model),
                                kinds=self.get_kinds(model), owners=self.get_owners(model))
            self._keys[cached] = self.translation(spec, template_data(model)).key
        return self._keys[cached]

    def get_asset_spec(self, model: Model, spec: dg.AssetSpec) -> dg.AssetSpec:
        if self.translation is None:
            return spec
        untranslated = spec.replace_attributes(key=super().get_asset_key(model))
        return self.translation(untranslated, template_data(model))

    def get_op_name(self, group_name: str) -> str:
        return self.op.name if self.op and self.op.name else group_name

    def get_op_tags(self, group_name: str) -> dict[str, str]:
        tags = super().get_op_tags(group_name)
        return {**tags, **(self.op.tags or {})} if self.op else tags
