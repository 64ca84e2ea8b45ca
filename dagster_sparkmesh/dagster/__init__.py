"""The Dagster integration: the only package that imports dagster.

A thin shell over the core: a pure spec builder (model → AssetSpec) behind the ``sparkmesh_assets`` decorator
factory, a promotion asset per environment, a git sensor, branch environments (an asset partitioned by branch, its sensor) and a resource.
"""

from dagster_sparkmesh.dagster.assets import sparkmesh_assets
from dagster_sparkmesh.dagster.branch_environments import BranchEnvironments
from dagster_sparkmesh.dagster.definitions import SparkMeshProject, build_sparkmesh_definitions
from dagster_sparkmesh.dagster.promotion import promotion_asset, promotion_condition, promotion_key
from dagster_sparkmesh.dagster.readers_sensor import sparkmesh_restated_readers_sensor
from dagster_sparkmesh.dagster.resource import SparkMeshResource
from dagster_sparkmesh.dagster.selection import build_sparkmesh_asset_selection
from dagster_sparkmesh.dagster.sensor import ReloadTarget, sparkmesh_git_sensor
from dagster_sparkmesh.dagster.specs import SparkMeshSpecs, SpecGroup, build_sparkmesh_specs
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator, SparkMeshTranslatorSettings

__all__ = [
    "BranchEnvironments",
    "ReloadTarget",
    "SparkMeshProject",
    "SparkMeshResource",
    "SparkMeshSpecs",
    "SparkMeshTranslator",
    "SparkMeshTranslatorSettings",
    "SpecGroup",
    "build_sparkmesh_asset_selection",
    "build_sparkmesh_definitions",
    "build_sparkmesh_specs",
    "promotion_asset",
    "promotion_condition",
    "promotion_key",
    "sparkmesh_assets",
    "sparkmesh_restated_readers_sensor",
    "sparkmesh_git_sensor",
]
