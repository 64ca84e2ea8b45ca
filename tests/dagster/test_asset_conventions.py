"""What a dagster-dbt user finds on each asset, here too: freshness from the cron, links to the code, the storage
kind, a concurrency pool, and (opt-in) runs when the cron is due. Each evaluated by Dagster itself."""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.freshness import FreshnessState
from dagster._core.definitions.freshness_evaluator import CronFreshnessPolicyEvaluator
from dagster._core.loader import LoadingContextForTest
from dagster._core.test_utils import freeze_time

from dagster_sparkmesh.dagster import (
    SparkMeshProject,
    SparkMeshTranslator,
    build_sparkmesh_asset_selection,
    build_sparkmesh_definitions,
)
from dagster_sparkmesh.dagster.code_links import browse_url
from dagster_sparkmesh.dagster.cron import cron_freshness, dagster_cron, longest_period
from dagster_sparkmesh.dagster.translator import SparkMeshTranslatorSettings
from dagster_sparkmesh.errors import ConfigError, PlanError

_spec = importlib.util.spec_from_file_location("conventions_specs", Path(__file__).with_name("test_specs.py"))
specs_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(specs_tests)

DAILY = dg.AssetKey(["shop", "daily"])
MIDNIGHT = datetime(2024, 3, 5, tzinfo=timezone.utc)


def _definitions(**settings) -> dg.Definitions:
    translator = SparkMeshTranslator(SparkMeshTranslatorSettings(**settings))
    return build_sparkmesh_definitions(SparkMeshProject.from_loaded(specs_tests._project()), translator=translator)


def _freshness(instance, node, at: datetime) -> FreshnessState:
    with freeze_time(at):
        return asyncio.run(CronFreshnessPolicyEvaluator().evaluate_freshness(LoadingContextForTest(instance), node))


def test_a_daily_model_turns_stale_when_a_day_is_late():
    node = _definitions().resolve_asset_graph().get(DAILY)
    assert node.freshness_policy == dg.FreshnessPolicy.cron(deadline_cron="0 0 * * *", lower_bound_delta=timedelta(days=1))
    with dg.instance_for_test() as instance:
        with freeze_time(MIDNIGHT + timedelta(minutes=20)):  # the run after the 5th's tick wrote the 4th
            instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=DAILY, partition="2024-03-04"))
        assert _freshness(instance, node, MIDNIGHT + timedelta(hours=23)) == FreshnessState.PASS
        assert _freshness(instance, node, MIDNIGHT + timedelta(days=1, hours=2)) == FreshnessState.PASS  # due, one period of grace
        assert _freshness(instance, node, MIDNIGHT + timedelta(days=2, hours=1)) == FreshnessState.FAIL  # a day late


def test_periods_and_crons_in_dagsters_terms():
    assert (dagster_cron("@daily"), dagster_cron("@hourly"), dagster_cron("0 */6 * * *")) == ("0 0 * * *", "0 * * * *", "0 */6 * * *")
    assert longest_period("@monthly") == timedelta(days=31)
    assert longest_period("0 9 * * 1-5") == timedelta(days=3)  # Friday 9:00 to Monday 9:00


def test_code_references_storage_kind_and_pool():
    defs = _definitions()
    graph = defs.resolve_asset_graph()
    metadata = graph.get(DAILY).metadata
    [reference] = metadata["dagster/code_references"].code_references
    assert (reference.file_path, reference.line_number) == ("models/shop.daily.sql", 1)
    assert metadata["dagster/storage_kind"] == "spark"
    assert {assets_def.op.pool for assets_def in defs.assets if isinstance(assets_def, dg.AssetsDefinition) and
            DAILY in assets_def.keys} == {"sparkmesh"}
    plain = _definitions(enable_code_references=False, freshness_from_cron=False, pool=None)
    node = plain.resolve_asset_graph().get(DAILY)
    assert "dagster/code_references" not in node.metadata and node.freshness_policy is None


def test_models_run_when_their_cron_is_due_only_when_asked():
    assert _definitions().resolve_asset_graph().get(DAILY).automation_condition is None
    defs = _definitions(automate_on_cron=True)
    selection = dg.AssetSelection.assets(DAILY)
    with dg.instance_for_test() as instance:

        def evaluate(at: datetime, cursor=None):
            return dg.evaluate_automation_conditions(defs, instance, selection, evaluation_time=at, cursor=cursor)

        before = evaluate(datetime(2024, 1, 9, 23, 50))
        ticked = evaluate(datetime(2024, 1, 10, 0, 10), before.cursor)
        assert ticked.total_requested == 0  # due, but its parent has not been updated since the tick
        # shop.daily reads staging.orders (a model) and, through an embedded model, raw.events (external).
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=["staging", "orders"]))
        ready = evaluate(datetime(2024, 1, 10, 0, 20), ticked.cursor)
        assert ready.total_requested == 1  # the external parent does not hold it back
        [result] = [r for r in ready.results if r.key == DAILY]
        assert result.true_subset.expensively_compute_partition_keys() == {"2024-01-09"}
        assert evaluate(datetime(2024, 1, 10, 0, 30), ready.cursor).total_requested == 0  # once per tick



def test_a_weekly_model_requests_the_seven_days_of_its_week_when_its_cron_is_due():
    """Its partitions are days (SQLMesh's interval unit of @weekly); its daily parent updated them before the tick."""
    days = specs_tests._model("shop.days", "SELECT id, ts AS ds FROM raw.events", ("raw.events",),
                              kind=specs_tests.INCREMENTAL)
    weekly = specs_tests._model("shop.weekly", "SELECT id, ds FROM shop.days", ("shop.days",),
                                kind=specs_tests.INCREMENTAL, cron="@weekly")
    translator = SparkMeshTranslator(SparkMeshTranslatorSettings(automate_on_cron=True))
    defs = build_sparkmesh_definitions(SparkMeshProject.from_loaded(specs_tests._project(days, weekly)),
                                       translator=translator)
    parent, key = dg.AssetKey(["shop", "days"]), dg.AssetKey(["shop", "weekly"])
    with dg.instance_for_test() as instance:

        def evaluate(at: datetime, cursor=None):
            return dg.evaluate_automation_conditions(defs, instance, dg.AssetSelection.assets(parent, key),
                                                     evaluation_time=at, cursor=cursor)

        cursor = None
        for day in range(7, 14):  # the week's daily runs of the parent, one a day
            cursor = evaluate(datetime(2024, 1, day, 0, 10), cursor).cursor
            instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=parent, partition=f"2024-01-{day - 1:02d}"))
        saturday = evaluate(datetime(2024, 1, 13, 23, 50), cursor)
        assert not [r for r in saturday.results if r.key == key and r.true_subset.size]  # not due
        sunday = evaluate(datetime(2024, 1, 14, 0, 10), saturday.cursor)
        [result] = [r for r in sunday.results if r.key == key]
        assert result.true_subset.expensively_compute_partition_keys() == {f"2024-01-{d:02d}" for d in range(7, 14)}
        later = evaluate(datetime(2024, 1, 14, 1, 10), sunday.cursor)
        assert not [r for r in later.results if r.key == key and r.true_subset.size]  # once per tick


def test_an_unpartitioned_weekly_model_is_rebuilt_at_each_tick():
    summary = specs_tests._model("shop.weekly_summary", "SELECT COUNT(*) AS n FROM raw.events", ("raw.events",),
                                 kind={"name": "FULL"}, cron="@weekly")
    translator = SparkMeshTranslator(SparkMeshTranslatorSettings(automate_on_cron=True))
    defs = build_sparkmesh_definitions(SparkMeshProject.from_loaded(specs_tests._project(summary)), translator=translator)
    key = dg.AssetKey(["shop", "weekly_summary"])
    with dg.instance_for_test() as instance:
        cursor, requested = None, []
        for at in (datetime(2024, 1, 6, 23), datetime(2024, 1, 7, 0, 10), datetime(2024, 1, 13, 23), datetime(2024, 1, 14, 0, 10)):
            result = dg.evaluate_automation_conditions(defs, instance, dg.AssetSelection.assets(key), evaluation_time=at,
                                                       cursor=cursor)
            cursor = result.cursor
            requested.append(result.total_requested)
            if result.total_requested:
                instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=key))
        assert requested == [0, 1, 0, 1]  # each Sunday, also after its first run

def test_sparkmesh_selectors_as_a_dagster_asset_selection():
    project = specs_tests._project()
    defs = build_sparkmesh_definitions(SparkMeshProject.from_loaded(project))
    graph = defs.resolve_asset_graph()

    def keys(*selectors, **options):
        selection = build_sparkmesh_asset_selection(defs, *selectors, project=project, **options)
        return sorted(key.to_user_string() for key in selection.resolve(graph))

    assert keys("tag:finance") == ["shop/daily"]
    assert keys("+tag:finance") == ["raw/orders", "shop/daily", "staging/orders"]  # the embedded model is no asset
    assert keys("raw.orders+") == ["raw/orders", "shop/daily", "staging/orders"]
    assert keys("*.orders", exclude=["raw*"]) == ["staging/orders"]
    with pytest.raises(PlanError, match="tag:financ"):  # a typo is an error with the near match, never nothing
        keys("tag:financ")


def test_the_selection_reads_the_project_of_the_definitions_resource(tmp_path):
    example = Path(__file__).resolve().parents[2] / "example_project"
    defs = build_sparkmesh_definitions(example, sensor=False)
    selection = build_sparkmesh_asset_selection(defs, "raw.orders+")
    selected = {key.to_user_string() for key in selection.resolve(defs.resolve_asset_graph())}
    assert "raw/orders" in selected and len(selected) > 2
    job = dg.define_asset_job("finance", selection=selection)
    assert dg.Definitions.merge(defs, dg.Definitions(jobs=[job])).resolve_job_def("finance") is not None


def test_code_references_link_to_the_projects_git_host(tmp_path):
    example = tmp_path / "repo" / "shop"
    shutil.copytree(Path(__file__).resolve().parents[2] / "example_project", example,
                    ignore=shutil.ignore_patterns(".sparkmesh", "__pycache__"))
    git = ["git", "-C", str(example.parent)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "remote", "add", "origin", "git@github.com:acme/warehouse.git"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "shop"], check=True)
    defs = build_sparkmesh_definitions(example, sensor=False)
    [reference] = defs.resolve_asset_graph().get(dg.AssetKey(["shop", "fct_orders"])).metadata["dagster/code_references"].code_references
    assert reference.url == "https://github.com/acme/warehouse/tree/main/shop/models/shop/fct_orders.sql#L1"
    assert browse_url("https://ci-token@gitlab.com/acme/warehouse.git") == "https://gitlab.com/acme/warehouse"
    assert browse_url("ssh://git@internal.host/acme/warehouse") is None  # not a host whose file URLs we know


def test_crons_whose_periods_vary_get_a_time_window_policy():
    assert cron_freshness("@monthly") == dg.FreshnessPolicy.time_window(fail_window=timedelta(days=62), warn_window=timedelta(days=31))
    assert isinstance(cron_freshness("0 9 * * 1-5"), type(dg.FreshnessPolicy.time_window(fail_window=timedelta(days=1))))
    monthly = specs_tests._model("shop.monthly", "SELECT 1 AS x", cron="@monthly")
    build_sparkmesh_definitions(SparkMeshProject.from_loaded(specs_tests._project(monthly))).resolve_asset_graph()


def test_an_exclude_matching_nothing_excludes_nothing_and_a_renamed_spec_is_refused():
    project = specs_tests._project()
    defs = build_sparkmesh_definitions(SparkMeshProject.from_loaded(project), exclude=["tag:wip"])
    assert DAILY in defs.resolve_asset_graph().get_all_asset_keys()

    class Renaming(SparkMeshTranslator):
        def get_asset_spec(self, model, spec):
            return spec.replace_attributes(key=spec.key.with_prefix("p"))

    with pytest.raises(ConfigError, match="rename assets in get_asset_key"):
        build_sparkmesh_definitions(SparkMeshProject.from_loaded(project), translator=Renaming())


def test_the_sensors_plans_take_only_the_selected_models(tmp_path):
    from dagster_sparkmesh.dagster.sensor import StatePlanner
    from dagster_sparkmesh.project.loader import load_project

    shop = tmp_path / "shop"
    shutil.copytree(Path(__file__).parent / "projects" / "shop", shop)
    project = load_project(shop)
    plan = StatePlanner("prod", None, selection=(["+shop.daily"], [])).plan(project)
    assert set(plan.missing_intervals) == {"raw.events", "shop.daily"}  # no interval left for unselected models
    everything = StatePlanner("prod", None).plan(project)
    assert {"shop.summary", "shop.daily_flags"} <= set(everything.missing_intervals)


def test_a_day_refreshed_each_hour_is_late_by_days_not_hours():
    # allow_partials with an interval unit longer than the cron: Dagster materializes one partition a day.
    from tests.plan.conftest import make_model

    days = make_model("s.days", "SELECT 1 AS ds", cron="@hourly", interval_unit="day", allow_partials=True)
    policy = SparkMeshTranslator(SparkMeshTranslatorSettings()).get_freshness_policy(days)
    assert policy == cron_freshness("@daily")
    hourly = make_model("s.hours", "SELECT 1 AS ds", cron="@hourly")
    assert SparkMeshTranslator(SparkMeshTranslatorSettings()).get_freshness_policy(hourly) == cron_freshness("@hourly")


def test_a_model_whose_cron_ticks_in_los_angeles_is_requested_after_midnight_there():
    # cron_tz: the tick is midnight in Los Angeles (08:00 UTC in January); the partitions stay UTC days.
    zoned = specs_tests._model("shop.zoned", "SELECT id, ts AS ds FROM raw.events", ("raw.events",),
                               kind=specs_tests.INCREMENTAL, cron="@daily", cron_tz="America/Los_Angeles")
    translator = SparkMeshTranslator(SparkMeshTranslatorSettings(automate_on_cron=True))
    defs = build_sparkmesh_definitions(SparkMeshProject.from_loaded(specs_tests._project(zoned)), translator=translator)
    key = dg.AssetKey(["shop", "zoned"])
    assert defs.resolve_asset_graph().get(key).freshness_policy == dg.FreshnessPolicy.cron(
        deadline_cron="0 0 * * *", lower_bound_delta=timedelta(days=1), timezone="America/Los_Angeles")
    with dg.instance_for_test() as instance:

        def evaluate(at: datetime, cursor=None):
            return dg.evaluate_automation_conditions(defs, instance, dg.AssetSelection.assets(key),
                                                     evaluation_time=at, cursor=cursor)

        first = evaluate(datetime(2024, 1, 10, 7, 50))  # (the cursor's start: nothing handled yet)
        before = evaluate(datetime(2024, 1, 10, 7, 55), first.cursor)
        assert not [r for r in before.results if r.true_subset.size]  # still the 9th's evening in Los Angeles
        after = evaluate(datetime(2024, 1, 10, 8, 10), before.cursor)
        [result] = [r for r in after.results if r.key == key]
        assert result.true_subset.expensively_compute_partition_keys() == {"2024-01-09"}
