"""``allow_partials`` models in Dagster, on real runs and Spark: a partition is a whole interval, so the steps
and the promotion plan whole intervals only. A promotion that planned the day so far (the CLI's plans do) would
find it unrecorded and refuse, since no partition can compute it."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from pathlib import Path

import dagster as dg
import pytest

pytest.importorskip("dagster_sparkmesh.engine.adapter")

from dagster_sparkmesh.clock import utc_now  # noqa: E402
from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_specs, promotion_key, sparkmesh_assets  # noqa: E402
from dagster_sparkmesh.dagster.promotion import promotion_asset  # noqa: E402
from dagster_sparkmesh.dagster.sensor_planner import StatePlanner  # noqa: E402
from dagster_sparkmesh.project.loader import load_project  # noqa: E402
from dagster_sparkmesh.state.store import open_state_store  # noqa: E402

pytestmark = pytest.mark.slow

HOURLY_DAYS = """MODEL (
  name p.hourly_days,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ts),
  cron '@hourly',
  interval_unit 'day',
  allow_partials true,
  start '{start}'
);

SELECT ts FROM (SELECT explode(sequence(TIMESTAMP'{start} 00:00:00', TIMESTAMP'{until} 00:00:00', INTERVAL 1 HOUR)) AS ts) AS hours
WHERE ts BETWEEN @start_ts AND @end_ts
"""
COUNTED = """MODEL (name p.counted, kind FULL, cron '30 2 * * *', allow_partials true);

SELECT COUNT(*) AS hours FROM p.hourly_days
"""


@pytest.fixture
def project_dir(tmp_path, spark, clean_catalog) -> Path:
    today = utc_now().date()
    target = tmp_path / "partials"
    (target / "models").mkdir(parents=True)
    (target / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    start, until = today - timedelta(days=2), today + timedelta(days=2)
    (target / "models" / "hourly_days.sql").write_text(HOURLY_DAYS.format(start=start, until=until))
    (target / "models" / "counted.sql").write_text(COUNTED)
    return target


def test_partitions_and_the_promotion_of_partial_models_are_whole_days(spark, project_dir):
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    resource = SparkMeshResource(project_dir=str(project_dir), spark_config={"spark.sql.warehouse.dir": warehouse})
    project = load_project(project_dir, use_cache=False)
    specs = build_sparkmesh_specs(project)
    assets = [*sparkmesh_assets(project=project, specs=specs), promotion_asset(project, specs)]
    days = next(spec for spec in specs.model_specs if spec.key == dg.AssetKey(["p", "hourly_days"]))
    keys = days.partitions_def.get_partition_keys()
    assert len(keys) == 2  # the two complete days; today is no partition yet

    with dg.instance_for_test() as instance:
        for selection, tags in (
            ([days.key], {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}),
            ([dg.AssetKey(["p", "counted"])], {}),
            ([promotion_key("prod")], {}),
        ):
            result = dg.materialize(assets, selection=selection, resources={"sparkmesh": resource}, instance=instance,
                                    tags=tags, raise_on_error=False)
            assert result.success, [str(e.step_failure_data.error) for e in result.all_events if e.is_step_failure]

    assert spark.sql("SELECT hours FROM p.counted").collect()[0][0] == 48  # two whole days, nothing of today
    state = open_state_store(project.config.state.url, project.runtime_path)
    try:
        environment = state.get_environment("prod")
        version = next(s.version for s in environment.snapshots if s.name == "p.hourly_days")
        recorded = state.get_intervals("p.hourly_days", version)
    finally:
        state.close()
    assert all(i.start.time() == i.end.time() == time(0) for i in recorded)  # midnight to midnight
    assert recorded[-1].end.date() == utc_now().date()


def test_the_git_sensors_plan_of_partial_models_is_whole_days(project_dir):
    project = load_project(project_dir, use_cache=False)
    afternoon = datetime.combine(utc_now().date(), time(15, 20))
    plan = StatePlanner("prod", None, clock=lambda: afternoon).plan(project)
    assert {name: intervals[-1].end for name, intervals in plan.missing_intervals.items()} == {
        "p.hourly_days": datetime.combine(utc_now().date(), time(0)),
        "p.counted": datetime.combine(utc_now().date(), time(0)),
    }
