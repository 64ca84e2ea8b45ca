"""``build_sparkmesh_definitions``: a whole project as Dagster definitions in one call.

Model assets, external assets, audit checks (external models' too), the promotion asset, the git sensor and the resource. Loading is
pure (project files only: no Spark, no state store), so that a code location of 1,000 models loads in seconds.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

import dagster as dg

from dagster_sparkmesh.dagster.assets import sparkmesh_assets
from dagster_sparkmesh.dagster.branch_environments import (
    BranchEnvironments,
    branch_asset_key,
    branch_environment_asset,
    janitor_job,
)
from dagster_sparkmesh.dagster.branch_sensor import sparkmesh_branch_sensor
from dagster_sparkmesh.dagster.broken_assets import broken_model_assets
from dagster_sparkmesh.dagster.code_links import GitLink, detect_git_link, link_to_git
from dagster_sparkmesh.dagster.external_checks import external_audit_checks
from dagster_sparkmesh.dagster.promotion import promotion_asset
from dagster_sparkmesh.dagster.readers_sensor import sparkmesh_restated_readers_sensor
from dagster_sparkmesh.dagster.resource import RESOURCE_KEY, SparkMeshResource
from dagster_sparkmesh.dagster.sensor import Approval, ReloadTarget, StatePlanner, default_approval, sparkmesh_git_sensor
from dagster_sparkmesh.dagster.specs import SparkMeshSpecs, build_sparkmesh_specs
from dagster_sparkmesh.dagster.standalone_checks import standalone_audit_checks
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.project.records import Project


@dataclass
class SparkMeshProject:
    """A project folder; loads it once, on first use."""

    path: Path | str
    state_url: str | None = None
    _loaded: Project | None = field(default=None, repr=False)
    more_paths: tuple[Path | str, ...] = ()
    """Further repositories of a multi-repo project; the first folder's config decides gateway and state."""

    def __post_init__(self) -> None:
        self.path = Path(self.path).resolve()
        self.more_paths = tuple(Path(p).resolve() for p in self.more_paths)

    @classmethod
    def of(cls, folders: Path | str | Sequence[Path | str], state_url: str | None = None) -> SparkMeshProject:
        """One folder, or several (a multi-repo project)."""
        if isinstance(folders, (str, Path)):
            return cls(folders, state_url)
        first, *more = folders
        return cls(first, state_url, more_paths=tuple(more))

    @classmethod
    def from_loaded(cls, project: Project, state_url: str | None = None) -> SparkMeshProject:
        """Wrap a project that is already loaded (the sensor still reloads it from disk on each commit)."""
        return cls(project.path, state_url, _loaded=project)

    @cached_property
    def project(self) -> Project:
        from dagster_sparkmesh.project.loader import load_project

        # Broken models are set aside: they become assets carrying their error, and the rest still loads.
        return self._loaded or load_project(self.path, more_paths=self.more_paths, set_aside_broken=True)

    def reload(self) -> Project:
        from dagster_sparkmesh.project.loader import load_project

        return load_project(self.path, more_paths=self.more_paths)

    def resource(self, **overrides) -> SparkMeshResource:
        return SparkMeshResource(
            project_dir=str(self.path),
            more_project_dirs=[str(p) for p in self.more_paths],
            state_url=self.state_url,
            **overrides,
        )


def build_sparkmesh_definitions(
    project_dir: Path | str | Sequence[Path | str] | SparkMeshProject,
    environment: str = "prod",
    *,
    translator: SparkMeshTranslator | None = None,
    resource: SparkMeshResource | None = None,
    backfill_policy: dg.BackfillPolicy | None = None,
    retry_policy: dg.RetryPolicy | None = None,
    skip_external_keys: Collection[dg.AssetKey] = (),
    sensor: bool = True,
    reload: ReloadTarget | None = None,
    sensor_status: dg.DefaultSensorStatus = dg.DefaultSensorStatus.STOPPED,
    promotion_condition: dg.AutomationCondition | None = None,
    automation_sensor_status: dg.DefaultSensorStatus | None = dg.DefaultSensorStatus.RUNNING,
    git_link: GitLink | Literal["auto"] | None = "auto",
    select: Sequence[str] = (),
    exclude: Sequence[str] = (),
    approval: Approval | None = None,
    sensor_interval_seconds: int = 60,
    resource_key: str = RESOURCE_KEY,
    readers_sensor_status: dg.DefaultSensorStatus | None = dg.DefaultSensorStatus.RUNNING,
    namespace: str | None = None,
    executor: dg.ExecutorDefinition | None = dg.in_process_executor,
    branches: BranchEnvironments | None = None,
) -> dg.Definitions:
    """Everything Dagster needs to run ``project_dir`` (or several folders: a multi-repo project) into ``environment``.

    ``reload``: the webserver and code location name the git sensor asks to reload after a new commit.
    ``retry_policy``: Dagster's retry policy for the model assets' steps (none by default).
    ``automation_sensor_status``: the automation sensor that evaluates the promotion asset's condition (and any
    model's, from ``SparkMeshTranslator.get_automation_condition``) starts running by default, so the promotion
    happens without a setting to find in the UI; None ships no sensor (when yours already targets these assets).
    ``git_link``: where the models' code references link to; ``"auto"``: the project's git repository when its
    ``origin`` is on GitHub or GitLab; None: local file references only.
    ``select`` / ``exclude``: sparkmesh selectors (``tag:finance+``) of the models that are assets of these
    definitions (default: every model); the git sensor requests runs for those only.
    ``resource_key``: the key of the project's SparkMeshResource (several projects in one code location each
    need their own).
    ``sensor_interval_seconds``: the git sensor's minimum interval between ticks.
    ``namespace``: needed when several projects of one code location share an environment: it goes into the
    promotion asset's key (``sparkmesh/<namespace>/promote_<env>``) and the names of the sensors and steps.
    ``executor``: the code location's default executor. In-process by default: a model run is one step (its
    models' Spark jobs are the parallel part), and a step in a process of its own costs a Python start and a code
    location load per run (2.5 s of a 4 s promotion, measured); None leaves Dagster's default (and yours).
    ``branches``: an environment per git branch (``BranchEnvironments``): the branch environments asset, its
    sensor and the janitor job; None ships none.
    ``readers_sensor_status``: the sensor that, after a person's run restated models, requests runs for the readers
    that run did not compute (running by default; None ships none).
    ``approval``: what waits for a person after a commit (``"none"``, ``"promotion"``, ``"backfill"``; default:
    ``"promotion"`` for prod, ``"none"`` for other environments). With approval, the promotion asset has no
    automation condition (unless ``promotion_condition`` gives one): materializing it is the approval.
    """
    approval = approval or default_approval(environment)
    sm_project = project_dir if isinstance(project_dir, SparkMeshProject) else SparkMeshProject.of(project_dir)
    project = sm_project.project
    translator = translator or SparkMeshTranslator()
    specs = build_sparkmesh_specs(
        project, translator, environment, skip_external_keys=skip_external_keys, select=select, exclude=exclude,
        namespace=namespace,
    )
    resource = resource or sm_project.resource()
    model_assets = sparkmesh_assets(
        project=project, environment=environment, translator=translator, backfill_policy=backfill_policy, specs=specs,
        retry_policy=retry_policy, resource_key=resource_key,
    )
    link = detect_git_link(sm_project.path) if git_link == "auto" else git_link
    if link is not None and not all(_inside(folder, link.root) for folder in (sm_project.path, *sm_project.more_paths)):
        link = None  # a multi-repo project's other repositories have other URLs: local references only
    assets: list = [
        *(link_to_git(model_assets, link) if link and translator.settings.enable_code_references else model_assets),
        *specs.external_specs,
        promotion_asset(project, specs, automation_condition=promotion_condition, automatic=approval == "none",
                        resource_key=resource_key),
    ]
    sensors: list[dg.SensorDefinition] = (
        [_sensor(sm_project, specs, translator, resource, reload, sensor_status, (select, exclude), approval,
                 sensor_interval_seconds)]
        if sensor
        else []
    )
    assets += broken_model_assets(project, {spec.key for spec in specs.model_specs} | set(specs.key_by_model.values()))
    assets += standalone_audit_checks(
        project, translator, environment, _asset_names(project, specs, translator), resource_key, specs.label
    )
    if readers_sensor_status is not None and specs.model_specs:
        sensors.append(_readers_sensor(sm_project, specs, translator, resource, readers_sensor_status, (select, exclude)))
    promotion_automated = approval == "none" or promotion_condition is not None
    automated = automation_sensor(specs, automation_sensor_status, promotion_automated) if automation_sensor_status else None
    sensors += [automated] if automated else []
    checks = external_audit_checks(project, translator, environment, skip_external_keys, resource_key, specs.label)
    jobs: list = []
    if branches is not None:
        branch_assets, branch_jobs, branch_sensor = _branch_environments(sm_project, specs, branches, resource, resource_key)
        assets += branch_assets
        jobs += branch_jobs
        sensors.append(branch_sensor)
    return dg.Definitions(assets=assets, asset_checks=checks, sensors=sensors, jobs=jobs,
                          resources={resource_key: resource}, executor=executor)


def _branch_environments(
    sm_project: SparkMeshProject, specs: SparkMeshSpecs, settings: BranchEnvironments, resource: SparkMeshResource,
    resource_key: str,
) -> tuple[list, list, dg.SensorDefinition]:
    """The branch environments asset, the job the sensor requests its partitions with, the janitor, the sensor."""
    if sm_project.more_paths:
        raise ConfigError(
            "branch environments follow the branches of one git repository; this project reads several "
            f"({', '.join(str(p) for p in (sm_project.path, *sm_project.more_paths))})",
            hint="leave `branches` out for a multi-repo project",
        )
    asset = branch_environment_asset(sm_project.project, settings, specs.environment, specs.label, specs.namespace,
                                     resource_key)
    branch_job = dg.define_asset_job(f"sparkmesh_{specs.label}_branch_environments",
                                     selection=[branch_asset_key(specs.namespace)])
    janitor = janitor_job(specs.label, resource_key)
    sensor = sparkmesh_branch_sensor(
        project_dir=sm_project.path, settings=settings, served=specs.environment, label=specs.label,
        branch_job=branch_job, janitor=janitor, state_url=resource.state_url or sm_project.project.config.state.url,
        environment_ttl=sm_project.project.config.environment_ttl,
    )
    return [asset], [branch_job, janitor], sensor


def _inside(folder: Path | str, root: Path) -> bool:
    return Path(folder).resolve().is_relative_to(root.resolve())


def _asset_names(project: Project, specs: SparkMeshSpecs, translator: SparkMeshTranslator) -> frozenset[str]:
    """The models and external models that are assets of this code location (what a check may target)."""
    externals = {spec.key for spec in specs.external_specs}
    return frozenset(specs.key_by_model) | {
        name for name, external in project.external_models.items() if translator.get_asset_key(external) in externals
    }


def automation_sensor(
    specs: SparkMeshSpecs, status: dg.DefaultSensorStatus, promotion_automated: bool = True
) -> dg.AutomationConditionSensorDefinition | None:
    """Dagster evaluates automation conditions only in an automation sensor; this one covers sparkmesh's assets
    that have one (None when none has)."""
    conditioned = [spec.key for spec in specs.model_specs if spec.automation_condition is not None]
    if promotion_automated:
        conditioned.append(specs.promotion_key)
    if not conditioned:
        return None
    return dg.AutomationConditionSensorDefinition(
        name=f"sparkmesh_{specs.label}_automation",
        target=dg.AssetSelection.assets(*conditioned),
        default_status=status,
        description=f"Promotes `{specs.environment}` once every upstream partition is materialized "
        "(the promotion asset's automation condition).",
    )


def _sensor(
    sm_project: SparkMeshProject,
    specs: SparkMeshSpecs,
    translator: SparkMeshTranslator,
    resource: SparkMeshResource,
    reload: ReloadTarget | None,
    status: dg.DefaultSensorStatus,
    selection: tuple[Sequence[str], Sequence[str]],
    approval: Approval,
    interval_seconds: int,
) -> dg.SensorDefinition:
    return sparkmesh_git_sensor(
        project_dir=sm_project.path,
        environment=specs.environment,
        load_project=sm_project.reload,
        planner=StatePlanner(specs.environment, resource.state_url, selection=selection),
        translator=translator,
        reload=reload,
        default_status=status,
        select=selection[0],
        exclude=selection[1],
        target=dg.AssetSelection.assets(specs.promotion_key, *(spec.key for spec in specs.model_specs)),
        approval=approval,
        namespace=specs.namespace,
        minimum_interval_seconds=interval_seconds,
    )


def _readers_sensor(
    sm_project: SparkMeshProject,
    specs: SparkMeshSpecs,
    translator: SparkMeshTranslator,
    resource: SparkMeshResource,
    status: dg.DefaultSensorStatus,
    selection: tuple[Sequence[str], Sequence[str]],
) -> dg.SensorDefinition:
    return sparkmesh_restated_readers_sensor(
        environment=specs.environment,
        load_project=lambda: sm_project.project,
        planner=StatePlanner(specs.environment, resource.state_url),
        translator=translator,
        target=dg.AssetSelection.assets(*(spec.key for spec in specs.model_specs)),
        select=selection[0],
        exclude=selection[1],
        default_status=status,
        namespace=specs.namespace,
    )


__all__ = ["SparkMeshProject", "SparkMeshSpecs", "build_sparkmesh_definitions"]
