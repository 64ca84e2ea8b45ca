"""The model assets carry the retry policy given to ``build_sparkmesh_definitions`` (none by default)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import dagster as dg

from dagster_sparkmesh.dagster import SparkMeshProject, build_sparkmesh_definitions

_SPECS_TESTS = Path(__file__).with_name("test_specs.py")
_spec = importlib.util.spec_from_file_location("dagster_test_specs_retry", _SPECS_TESTS)
specs_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(specs_tests)


def _model_assets(defs: dg.Definitions) -> list[dg.AssetsDefinition]:
    return [a for a in defs.assets if isinstance(a, dg.AssetsDefinition) and a.op.tags.get("kind") == "spark"]


def test_retry_policy_reaches_every_model_step():
    policy = dg.RetryPolicy(max_retries=2, delay=5, backoff=dg.Backoff.EXPONENTIAL)
    project = SparkMeshProject.from_loaded(specs_tests._project())
    with_policy = _model_assets(build_sparkmesh_definitions(project, retry_policy=policy, sensor=False))
    assert with_policy and all(a.op.retry_policy == policy for a in with_policy)
    default = _model_assets(build_sparkmesh_definitions(project, sensor=False))
    assert all(a.op.retry_policy is None for a in default)
