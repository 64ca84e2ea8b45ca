"""``allow_partials`` models in Dagster, on real runs and Spark: a partition is a whole interval, so the steps
and the promotion plan whole intervals only. A promotion that planned the day so far (the CLI's plans do) would
find it unrecorded and refuse, since no partition can compute it."""

from __future__ import annotations

import subprocess
from datetime import datetime, time, timedelta
from pathlib import Path

import dagster as dg
import pytest

pytest.importorskip("dagster_sparkmesh.engine.adapter")

from dagster_sparkmesh.clock import utc_now  # noqa: E402
from dagster_sparkmesh.dagster import (  # noqa: E402
    SparkMeshResource,
    build_sparkmesh_definitions,
    build_sparkmesh_specs,
    promotion_key,
    sparkmesh_assets,
    sparkmesh_git_sensor,
)
from dagster_sparkmesh.dagster.promotion import promotion_asset  # noqa: E402
from dagster_sparkmesh.dagster.sensor_planner import StatePlanner  # noqa: E402
from dagster_sparkmesh.project.loader import load_project  # noqa: E402
from dagster_sparkmesh.state.store import open_state_store  # noqa: E402

RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def _git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(["git", *identity, *args], cwd=repo, check=True, capture_output=True)

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
    # Through evaluate_tick, as Dagster's daemon evaluates the sensor: at 15:20, the CLI would compute today's
    # hours so far; the sensor's run asks for the two whole days, which are partitions.
    _git(project_dir, "init", "-q")
    _git(project_dir, "add", ".")
    _git(project_dir, "commit", "-qm", "partial models")
    today = utc_now().date()
    afternoon = datetime.combine(today, time(15, 20))
    sensor = sparkmesh_git_sensor(
        project_dir=project_dir, environment="prod", load_project=lambda: load_project(project_dir, use_cache=False),
        planner=StatePlanner("prod", None, clock=lambda: afternoon),
    )
    assets = build_sparkmesh_definitions(project_dir, sensor=False, git_link=None, automation_sensor_status=None)
    defs = dg.Definitions.merge(assets, dg.Definitions(sensors=[sensor]))
    with dg.instance_for_test() as instance:
        tick = sensor.evaluate_tick(dg.build_sensor_context(instance=instance, definitions=defs))
    [request] = tick.run_requests
    assert [key.to_user_string() for key in request.asset_selection] == ["p/hourly_days"]
    yesterday = (today - timedelta(days=1)).isoformat()
    assert (request.tags[RANGE_START], request.tags[RANGE_END]) == ((today - timedelta(days=2)).isoformat(), yesterday)
    [shown] = [event for event in tick.asset_events if isinstance(event, dg.AssetObservation)]
    # two whole days, up to midnight (a partial plan: three intervals, to 15:20)
    assert f"| `p.hourly_days` | 2 | {today - timedelta(days=2)} → {today} |" in shown.metadata["plan"].value
