"""``SparkMeshProjectComponent``: a sparkmesh project as a Dagster Component, configured in a ``defs.yaml``, in the
style of dagster-dbt's ``DbtProjectComponent``::

    type: dagster_sparkmesh.SparkMeshProjectComponent
    attributes:
      project: ../../../shop            # or a list of folders: a multi-repo project
      environment: prod
      engine: {mode: managed}
      select: ["tag:finance+"]
      translation:
        group_name: "{{ node.schema }}_models"
        tags: {cron: "{{ node.cron }}"}
      op: {pool: spark_cluster}
      sensor: {enabled: true, default_status: running}
      branches: {prod_branch: main, default_status: running}

It builds exactly what ``build_sparkmesh_definitions`` builds; ``definitions.py`` with that function stays the
Python alternative. ``translation`` is templated per model: ``node`` holds the model's name, schema, table, kind,
cron, tags, owner, description, path and fingerprint, ``spec`` the asset spec sparkmesh made for it.
"""

# No `from __future__ import annotations`: Dagster reads these annotations at runtime to build the yaml schema.
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import dagster as dg
from dagster.components.resolved.core_models import (
    MultiRunBackfillPolicyModel,
    OpSpec,
    SingleRunBackfillPolicyModel,
    resolve_backfill_policy,
)
from dagster.components.utils.translation import TranslationFn, TranslationFnResolver

from dagster_sparkmesh.dagster.branch_environments import BranchEnvironments
from dagster_sparkmesh.dagster.component_scaffolder import SparkMeshProjectScaffolder
from dagster_sparkmesh.dagster.component_translator import ComponentTranslator
from dagster_sparkmesh.dagster.definitions import SparkMeshProject, build_sparkmesh_definitions
from dagster_sparkmesh.dagster.resource import SparkMeshResource
from dagster_sparkmesh.dagster.sensor import ReloadTarget
from dagster_sparkmesh.dagster.specs import dagster_name
from dagster_sparkmesh.dagster.translator import SparkMeshTranslatorSettings


class EngineSettings(dg.Model):
    """Where the models run; anything unset comes from the project's ``config.yaml``."""

    mode: Literal["local", "managed", "connect"] | None = None
    remote: str | None = None
    master: str | None = None
    spark_config: dict[str, str] = {}
    max_workers: int = 2
    csv_sources: dict[str, str] = {}
    """External model -> folder of CSV files (relative to the project), for local development."""


class ReloadSettings(dg.Model):
    location_name: str
    host: str = "127.0.0.1"
    port: int = 3000


class SensorSettings(dg.Model):
    """The git sensor: plans and requests runs after each commit of the project's repository."""

    enabled: bool = True
    default_status: Literal["running", "stopped"] = "stopped"
    reload: ReloadSettings | None = None
    approval: Literal["none", "promotion", "backfill"] | None = None
    """What waits for a person after a commit (default: the promotion for prod, nothing elsewhere)."""
    minimum_interval_seconds: int = 60


class BranchSettings(dg.Model):
    """Branch environments: an environment per git branch matching ``branches`` (``BranchEnvironments``)."""

    prod_branch: str = "main"
    branches: list[str] = ["*"]
    exclude: list[str] = []
    preview_start: str | None = None
    fetch: str | None = None
    default_status: Literal["running", "stopped"] = "stopped"
    minimum_interval_seconds: int = 60

    def settings(self) -> BranchEnvironments:
        return BranchEnvironments(
            prod_branch=self.prod_branch, branches=tuple(self.branches), exclude=tuple(self.exclude),
            preview_start=self.preview_start, fetch=self.fetch,
            sensor_status=dg.DefaultSensorStatus(self.default_status.upper()), interval_seconds=self.minimum_interval_seconds,
        )


class TranslationSettings(dg.Model):
    automate_on_cron: bool = False
    freshness_from_cron: bool = True
    enable_code_references: bool = True


class RetryPolicyModel(dg.Model):
    max_retries: int = 1
    delay: float | None = None
    backoff: Literal["LINEAR", "EXPONENTIAL"] | None = None
    jitter: Literal["FULL", "PLUS_MINUS"] | None = None


def _resolve_retry_policy(context: dg.ResolutionContext, model: RetryPolicyModel | None) -> dg.RetryPolicy | None:
    if model is None:
        return None
    return dg.RetryPolicy(
        max_retries=model.max_retries,
        delay=model.delay,
        backoff=dg.Backoff(model.backoff) if model.backoff else None,
        jitter=dg.Jitter(model.jitter) if model.jitter else None,
    )


def _resolve_projects(context: dg.ResolutionContext, value: str | list[str]) -> list[str]:
    """Folders relative to the ``defs.yaml`` that names them (after templating)."""
    folders = [value] if isinstance(value, str) else list(value)
    return [str(context.resolve_source_relative_path(context.resolve_value(folder))) for folder in folders]


_EXECUTORS = {"in_process": dg.in_process_executor, "multiprocess": dg.multiprocess_executor, "location_default": None}


@dg.scaffold_with(SparkMeshProjectScaffolder)
@dataclass
class SparkMeshProjectComponent(dg.Component, dg.Resolvable):
    """A sparkmesh (SQLMesh-format) project: one asset per model, audits as checks, external assets, the
    environment's promotion asset, the git sensor and the resource."""

    project: Annotated[
        list[str],
        dg.Resolver(_resolve_projects, model_field_type=str | list[str],
                    description="the project folder, or several (a multi-repo project), relative to this file"),
    ]
    environment: str = "prod"
    state_url: str | None = None
    engine: EngineSettings | None = None
    select: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    translation: Annotated[
        TranslationFn[Mapping[str, Any]] | None,
        TranslationFnResolver(template_vars_for_translation_fn=lambda data: {"node": data}),
    ] = None
    translation_settings: TranslationSettings | None = None
    op: Annotated[OpSpec | None, dg.Resolver.default(description="name, tags, pool, backfill_policy of the steps")] = None
    backfill_policy: Annotated[
        dg.BackfillPolicy | None,
        dg.Resolver(resolve_backfill_policy, model_field_type=SingleRunBackfillPolicyModel | MultiRunBackfillPolicyModel | None),
    ] = None
    """Of every model step (default: one run per range, or the model's batch size); ``op.backfill_policy`` too."""
    retry_policy: Annotated[
        dg.RetryPolicy | None, dg.Resolver(_resolve_retry_policy, model_field_type=RetryPolicyModel | None)
    ] = None
    sensor: SensorSettings | None = None
    branches: BranchSettings | None = None
    """An environment per git branch (none without this block): ``branches: {prod_branch: main}``."""
    promotion_condition: Annotated[
        dg.AutomationCondition | None, dg.Resolver.default(model_field_type=str | None)
    ] = None
    skip_external_keys: list[str] = field(default_factory=list)
    resource_key: str | None = None
    """The key of the project's resource; default ``sparkmesh_<project folder>``, so that several projects can
    share a code location."""
    executor: Literal["in_process", "multiprocess", "location_default"] = "in_process"
    """The code location's default executor: steps in the run's process (no process start and code load per
    step), one process per step, or none set here (another component or your definitions choose)."""
    namespace: str | None = None
    """Needed when several projects of the code location share an environment: their promotion assets become
    ``sparkmesh/<namespace>/promote_<env>``, and their sensors and steps are named apart."""

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        project = SparkMeshProject.of(self.project, self.state_url)
        sensor = self.sensor or SensorSettings()
        return build_sparkmesh_definitions(
            project,
            self.environment,
            translator=self.translator(),
            resource=self.resource(project),
            backfill_policy=self.backfill_policy or (self.op.backfill_policy if self.op else None),
            retry_policy=self.retry_policy,
            skip_external_keys=[dg.AssetKey.from_user_string(key) for key in self.skip_external_keys],
            sensor=sensor.enabled,
            reload=ReloadTarget(**sensor.reload.model_dump()) if sensor.reload else None,
            sensor_status=dg.DefaultSensorStatus(sensor.default_status.upper()),
            promotion_condition=self.promotion_condition,
            select=self.select,
            exclude=self.exclude,
            approval=sensor.approval,
            sensor_interval_seconds=sensor.minimum_interval_seconds,
            resource_key=self.resource_key or f"sparkmesh_{dagster_name(Path(self.project[0]).name)}",
            namespace=self.namespace,
            executor=_EXECUTORS[self.executor],
            branches=self.branches.settings() if self.branches else None,
        )

    def translator(self) -> ComponentTranslator:
        settings = (self.translation_settings or TranslationSettings()).model_dump()
        if self.op and self.op.pool:
            settings["pool"] = self.op.pool
        return ComponentTranslator(SparkMeshTranslatorSettings(**settings), self.translation, self.op)

    def resource(self, project: SparkMeshProject) -> SparkMeshResource:
        engine = self.engine or EngineSettings()
        return project.resource(
            engine_mode=engine.mode,
            remote=engine.remote,
            master=engine.master,
            spark_config=engine.spark_config,
            max_workers=engine.max_workers,
            csv_sources=engine.csv_sources,
        )

