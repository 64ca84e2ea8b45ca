"""``build_sparkmesh_asset_selection``: sparkmesh model selectors (``tag:finance+``, ``+db.orders``, ``db*``) as a
Dagster ``AssetSelection``, for jobs, schedules and sensors, as dagster-dbt's ``build_dbt_asset_selection`` does
for dbt's selectors.

Selectors are read exactly as ``sparkmesh plan --select-model`` reads them (the project's models, tags and DAG),
then mapped to the asset keys the definitions gave those models (``sparkmesh/model`` metadata), so a custom
translator's keys are respected. Embedded models are in no asset; a selector matching nothing is an error.
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg

from dagster_sparkmesh.dagster.definitions import SparkMeshProject
from dagster_sparkmesh.dagster.resource import SparkMeshResource
from dagster_sparkmesh.dagster.specs import selected_models
from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.project.records import Project

_MODEL_METADATA = "sparkmesh/model"


def build_sparkmesh_asset_selection(
    defs: dg.Definitions,
    *selectors: str,
    exclude: Iterable[str] = (),
    project: SparkMeshProject | Project | None = None,
) -> dg.AssetSelection:
    """The model assets of ``defs`` that ``selectors`` pick, minus those ``exclude`` picks.

    ``project``: the project ``defs`` were built from; by default the one of their ``sparkmesh`` resource."""
    if not selectors:
        raise PlanError("build_sparkmesh_asset_selection needs at least one selector", hint="e.g. 'tag:finance+'")
    chosen = selected_models(_project(defs, project), selectors, tuple(exclude))
    keys = [key for key, name in _model_keys(defs).items() if name in chosen]
    return dg.AssetSelection.assets(*keys)


def _project(defs: dg.Definitions, project: SparkMeshProject | Project | None) -> Project:
    if isinstance(project, Project):
        return project
    if isinstance(project, SparkMeshProject):
        return project.project
    resources = [r for r in (defs.resources or {}).values() if isinstance(r, SparkMeshResource)]
    if len(resources) != 1:
        raise PlanError(
            f"these definitions have {len(resources) or 'no'} sparkmesh resource(s) to read the project from",
            hint="pass project=SparkMeshProject(path) to build_sparkmesh_asset_selection",
        )
    return resources[0].load_project()


def _model_keys(defs: dg.Definitions) -> dict[dg.AssetKey, str]:
    """Asset key → model name, for every sparkmesh model asset of ``defs``."""
    graph = defs.resolve_asset_graph()
    found = {}
    for key in graph.get_all_asset_keys():
        name = graph.get(key).metadata.get(_MODEL_METADATA)
        if isinstance(name, str) and graph.get(key).is_materializable:
            found[key] = name
    return found
