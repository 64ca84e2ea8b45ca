"""before_all / after_all from config.yaml run once around a plan application, with @this_env and @views."""

from datetime import datetime

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for

CONFIG = """
before_all:
  - CREATE SCHEMA IF NOT EXISTS run_log
  - CREATE TABLE IF NOT EXISTS run_log.events (env STRING, stage STRING, views INT) USING parquet
  - INSERT INTO run_log.events SELECT @this_env, 'before', SIZE(@views)
after_all:
  - INSERT INTO run_log.events SELECT @this_env, 'after', COUNT(*) FROM shop.daily
"""


def test_before_all_and_after_all_run_once_around_the_apply(spark, mini_project, make_context):
    config = mini_project / "config.yaml"
    config.write_text(config.read_text() + CONFIG)
    ctx = make_context(mini_project)
    assert len(ctx.project.config.before_all) == 3
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 4)))
    rows = sorted(tuple(r) for r in spark.sql("SELECT env, stage, views FROM run_log.events").collect())
    # after_all sees the promoted views (3 days of shop.daily); before_all the environment's four views.
    assert rows == [("prod", "after", 3), ("prod", "before", 4)]
