"""Definitions from a hand-built project: everything resolves, the promotion asset depends on every model."""

from __future__ import annotations

import importlib.util
import time
from datetime import datetime
from pathlib import Path

import dagster as dg

from dagster_sparkmesh.dagster import SparkMeshProject, build_sparkmesh_definitions, promotion_key
from dagster_sparkmesh.model import Model
from dagster_sparkmesh.project.config import ModelDefaults, ProjectConfig
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.fingerprint import chain_fingerprints

_SPECS_TESTS = Path(__file__).with_name("test_specs.py")
_spec = importlib.util.spec_from_file_location("dagster_test_specs", _SPECS_TESTS)
specs_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(specs_tests)


def _definitions(project: Project, **options) -> dg.Definitions:
    return build_sparkmesh_definitions(SparkMeshProject.from_loaded(project), **options)


def test_definitions_resolve_with_models_externals_checks_promotion_sensor_and_resource():
    defs = _definitions(specs_tests._project())
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert {"raw/orders", "staging/orders", "shop/daily", "raw/events", "sparkmesh/promote_prod"} <= keys
    promote = graph.get(promotion_key("prod"))
    assert {k.to_user_string() for k in promote.parent_keys} == {"raw/orders", "staging/orders", "shop/daily"}
    assert promote.automation_condition is None  # prod's promotion waits for a person's approval by default
    assert {c.name for c in graph.asset_check_keys} == {"not_null", "not_null_non_blocking", "assert_positive"}
    assert [s.name for s in defs.sensors] == ["sparkmesh_prod_git_sensor", "sparkmesh_prod_restated_readers"]
    assert defs.executor is dg.in_process_executor  # a model run is one step: no process start per step
    readers = defs.get_sensor_def("sparkmesh_prod_restated_readers")
    assert readers.default_status == dg.DefaultSensorStatus.RUNNING  # late data reaches readers without a setting
    git_sensor = defs.get_sensor_def("sparkmesh_prod_git_sensor")
    assert git_sensor.asset_selection.resolve(graph) == {promote.key, *(graph.get(k).key for k in promote.parent_keys)}
    assert "sparkmesh" in defs.resources


def test_environments_without_approval_promote_by_themselves():
    dev = _definitions(specs_tests._project(), environment="dev").resolve_asset_graph()
    assert dev.get(promotion_key("dev")).automation_condition is not None
    prod = _definitions(specs_tests._project(), approval="none").resolve_asset_graph()
    assert prod.get(promotion_key("prod")).automation_condition is not None


def test_an_automation_sensor_runs_by_default_for_the_promotion_condition():
    defs = _definitions(specs_tests._project(), approval="none")
    sensor = defs.get_sensor_def("sparkmesh_prod_automation")
    assert isinstance(sensor, dg.AutomationConditionSensorDefinition)
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    graph = defs.resolve_asset_graph()
    assert sensor.asset_selection.resolve(graph) == {promotion_key("prod")}

    without = _definitions(specs_tests._project(), approval="none", automation_sensor_status=None)
    assert [s.name for s in without.sensors] == ["sparkmesh_prod_git_sensor", "sparkmesh_prod_restated_readers"]


def test_promotion_depends_on_all_partitions_of_partitioned_models():
    defs = _definitions(specs_tests._project())
    promote = defs.resolve_assets_def(promotion_key("prod"))
    mapping = promote.get_partition_mapping(dg.AssetKey(["shop", "daily"]))
    assert isinstance(mapping, dg.AllPartitionMapping)


def _large_project(count: int) -> Project:
    models = {}
    for index in range(count):
        parents = [f"s{(index - step) % 10}.m{index - step}" for step in (1, 7) if index - step >= 0]
        query = "SELECT ds, " + ", ".join(f"{i} AS c{i}" for i in range(5)) + (f" FROM {parents[0]}" if parents else "")
        kind = {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds"} if index % 3 else {"name": "FULL"}
        name = f"s{index % 10}.m{index}"
        models[name] = Model(
            name=name, kind=kind, source="sql", path=Path(f"{name}.sql"), query=query,
            depends_on=frozenset(parents), cron="@hourly" if index % 5 == 0 else "@daily",
        )
    return Project(
        path=Path("/tmp/large"),
        config=ProjectConfig(model_defaults=ModelDefaults(start="2024-01-01")),
        models=chain_fingerprints(models, {}),
    )


def test_a_thousand_models_build_definitions_in_well_under_five_seconds():
    project = _large_project(1000)
    # CPU time of this process: the work of building them, not how busy the machine's other processes keep it.
    began = time.process_time()
    defs = _definitions(project)
    graph = defs.resolve_asset_graph()
    elapsed = time.process_time() - began
    assert len(graph.get_all_asset_keys()) == 1001
    assert elapsed < 5, f"{elapsed:.1f}s"


def test_promotion_condition_waits_until_every_upstream_partition_is_materialized():
    defs = _definitions(specs_tests._project(end_daily="2024-01-03"), approval="none")
    keys = ["raw/orders", "staging/orders"]
    promote = dg.AssetSelection.assets(promotion_key("prod"))
    when = datetime(2024, 1, 10)
    with dg.instance_for_test() as instance:
        # The first evaluation only sets the baseline: updates count from there ("since last handled").
        baseline = dg.evaluate_automation_conditions(defs, instance, promote, evaluation_time=when)
        for key in keys:
            instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=dg.AssetKey.from_user_string(key)))
        for day in ("2024-01-01", "2024-01-02"):
            instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=["shop", "daily"], partition=day))
        one_missing = dg.evaluate_automation_conditions(
            defs, instance, promote, evaluation_time=when, cursor=baseline.cursor
        )
        assert one_missing.total_requested == 0

        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=["shop", "daily"], partition="2024-01-03"))
        complete = dg.evaluate_automation_conditions(
            defs, instance, promote, evaluation_time=when, cursor=one_missing.cursor
        )
        assert complete.total_requested == 1


def test_branch_environments_ship_their_asset_sensor_and_jobs_and_refuse_a_multi_repo_project(tmp_path):
    import pytest

    from dagster_sparkmesh.dagster import BranchEnvironments
    from dagster_sparkmesh.errors import ConfigError

    project = specs_tests._project()
    defs = _definitions(project, branches=BranchEnvironments(exclude=("wip/*",)))
    dg.Definitions.validate_loadable(defs)
    assert defs.resolve_sensor_def("sparkmesh_prod_branch_sensor") is not None
    assert {job.name for job in defs.resolve_all_job_defs()} >= {"sparkmesh_prod_branch_environments",
                                                                 "sparkmesh_prod_janitor"}
    branch_asset = defs.resolve_assets_def(dg.AssetKey(["sparkmesh", "branch_environments"]))
    assert isinstance(branch_asset.partitions_def, dg.DynamicPartitionsDefinition)
    assert not _definitions(project).resolve_all_job_defs() or all(
        "branch" not in job.name for job in _definitions(project).resolve_all_job_defs())

    with pytest.raises(ConfigError, match="one git repository"):
        build_sparkmesh_definitions(SparkMeshProject(project.path, _loaded=project, more_paths=(tmp_path,)),
                                    branches=BranchEnvironments())
