"""One plan travels: the sensor's stored plan is the one every step backfills and the promotion promotes; no step
builds a plan of its own, and the plan's snapshots are pushed once."""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path

import dagster as dg
import pytest

from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_specs, sparkmesh_assets
from dagster_sparkmesh.dagster.promotion import promotion_asset, promotion_key
from dagster_sparkmesh.dagster.sensor import StatePlanner
from dagster_sparkmesh.execution.plans import PLAN_ID_TAG, plan_for_run
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.plan import builder
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.state.store import StateStore, open_state_store


PROJECT = Path(__file__).parent / "projects" / "shop"
DAILY, FLAGS = dg.AssetKey(["shop", "daily"]), dg.AssetKey(["shop", "daily_flags"])
EVENTS, SUMMARY = dg.AssetKey(["raw", "events"]), dg.AssetKey(["shop", "summary"])
RANGE = {"dagster/asset_partition_range_start": "2024-01-01", "dagster/asset_partition_range_end": "2024-01-05"}


@pytest.fixture
def project_dir(tmp_path, clean_catalog) -> Path:
    target = tmp_path / "shop"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    return target


@pytest.fixture
def resource(spark, project_dir) -> SparkMeshResource:
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    return SparkMeshResource(project_dir=str(project_dir), spark_config={"spark.sql.warehouse.dir": warehouse})


@pytest.fixture
def calls(monkeypatch) -> Counter:
    """Counts ``build_plan`` calls wherever it was imported, and the plan preparations that did the work."""
    counter: Counter = Counter()
    original_build = builder.build_plan

    def counting_build(*args, **kwargs):
        counter["build_plan"] += 1
        return original_build(*args, **kwargs)

    for module in list(sys.modules.values()):
        # Its own attributes only: a module with a ``__getattr__`` (the ``sqlmesh`` shim) refuses unknown names.
        if getattr(module, "__dict__", {}).get("build_plan") is original_build:
            monkeypatch.setattr(module, "build_plan", counting_build)
    original_prepare = StateStore.prepare_plan

    def counting_prepare(self, plan_id, snapshots, restatements):
        did = original_prepare(self, plan_id, snapshots, restatements)
        counter["prepared"] += did
        counter["prepare_visits"] += 1
        return did

    monkeypatch.setattr(StateStore, "prepare_plan", counting_prepare)
    return counter


def _materialize(project_dir, resource, instance, selection, tags):
    project = load_project(project_dir, use_cache=False)
    specs = build_sparkmesh_specs(project)
    assets = [*sparkmesh_assets(project=project, specs=specs), promotion_asset(project, specs)]
    return dg.materialize(
        assets, selection=selection, resources={"sparkmesh": resource}, instance=instance, tags=tags, raise_on_error=False
    )


def test_the_sensor_plan_is_backfilled_by_every_step_and_promoted(project_dir, resource, calls):
    project = load_project(project_dir, use_cache=False)
    plan = StatePlanner("prod", None).plan(project)  # what the git sensor does on a new commit
    assert calls["build_plan"] == 1
    tagged = {PLAN_ID_TAG: plan.plan_id}
    with dg.instance_for_test() as instance:
        for selection, tags in (([EVENTS], tagged), ([DAILY, FLAGS], {**tagged, **RANGE}), ([SUMMARY], tagged)):
            assert _materialize(project_dir, resource, instance, selection, tags).success
        promoted = _materialize(project_dir, resource, instance, [promotion_key("prod")], tagged)
        assert promoted.success
    assert calls["build_plan"] == 1  # no step and no promotion planned again
    assert (calls["prepared"], calls["prepare_visits"]) == (1, 4)  # snapshots pushed once, by the first step
    with open_state_store(None, project_dir) as state:
        assert state.get_environment("prod").plan_id == plan.plan_id
        log = state.list_plan_applications()
    assert {row.plan_id for row in log} == {plan.plan_id}
    assert [row.outcome for row in log] == ["succeeded"] * 4


def test_a_run_without_a_plan_tag_plans_once_and_every_step_loads_it(project_dir, resource, calls):
    with dg.instance_for_test() as instance:
        result = _materialize(project_dir, resource, instance, [EVENTS], {})
        assert result.success
    assert calls["build_plan"] == 1
    with open_state_store(None, project_dir) as state:
        assert state.get_plan(f"dagster-{result.run_id}") is not None
        project = load_project(project_dir, use_cache=False)
        ctx = ExecutionContext(project=project, state=state, environment="prod", engine_factory=_no_engine)
        second_step = plan_for_run(ctx, None, result.run_id)  # another step of the same run
    assert calls["build_plan"] == 1
    assert second_step.plan_id == f"dagster-{result.run_id}"


def test_a_plan_from_other_project_files_is_refused_with_what_to_do(project_dir, resource, calls):
    project = load_project(project_dir, use_cache=False)
    plan = StatePlanner("prod", None).plan(project)
    daily = project_dir / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("COUNT(*) AS orders", "COUNT(DISTINCT id) AS orders"))
    with dg.instance_for_test() as instance:
        result = _materialize(project_dir, resource, instance, [EVENTS], {PLAN_ID_TAG: plan.plan_id})
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    message = failure.event_specific_data.error.message
    assert "shop.daily" in message and "other project files" in message
    with open_state_store(None, project_dir) as state:
        assert state.list_plan_applications() == []  # refused before anything was written


def _no_engine():
    raise AssertionError("loading a run's plan needs no Spark")
