"""A SQL model's ON_VIRTUAL_UPDATE block runs once a promotion points its view at the new table, on Spark:
``@this_model`` is the view (the environment's name), not the physical table."""

from datetime import datetime

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for

MODEL = """
MODEL (name shop.noted, kind FULL);

SELECT ds, total FROM shop.daily;

ON_VIRTUAL_UPDATE_BEGIN;
ALTER VIEW @this_model SET TBLPROPERTIES ('note' = 'promoted');
CREATE SCHEMA IF NOT EXISTS vu_sql_log;
CREATE TABLE IF NOT EXISTS vu_sql_log.calls (n BIGINT) USING parquet;
INSERT INTO vu_sql_log.calls SELECT COUNT(*) FROM @this_model;
ON_VIRTUAL_UPDATE_END;
"""


def test_the_block_runs_against_the_view_after_promotion(spark, mini_project, make_context):
    (mini_project / "models" / "noted.sql").write_text(MODEL)
    ctx = make_context(mini_project)
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))
    assert [r[0] for r in spark.sql("SELECT n FROM vu_sql_log.calls").collect()] == [2]  # two days, read via the view
    properties = dict((r[0], r[1]) for r in spark.sql("SHOW TBLPROPERTIES shop.noted").collect())
    assert properties.get("note") == "promoted"
