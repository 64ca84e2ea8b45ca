"""A Python model's session_properties are set around its job, and its on_virtual_update statements run once its
view points at a new table (``@this_model`` = the view), on Spark."""

from datetime import datetime

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for

SESSION_MODEL = '''
import pandas as pd
from dagster_sparkmesh import model


@model(
    "shop.settings_seen",
    kind="FULL",
    columns={"partitions": "string"},
    session_properties={"spark.sql.shuffle.partitions": 7},
    on_virtual_update=[
        "CREATE SCHEMA IF NOT EXISTS vu_log",
        "CREATE TABLE IF NOT EXISTS vu_log.calls (n BIGINT) USING parquet",
        "INSERT INTO vu_log.calls SELECT COUNT(*) FROM @this_model",
    ],
)
def execute(context, start, end, execution_time, **kwargs):
    return pd.DataFrame({"partitions": [context.spark.conf.get("spark.sql.shuffle.partitions")]})
'''


def test_session_properties_and_on_virtual_update(spark, mini_project, make_context):
    (mini_project / "models" / "settings_seen.py").write_text(SESSION_MODEL)
    before = spark.conf.get("spark.sql.shuffle.partitions")
    ctx = make_context(mini_project)
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))
    assert spark.sql("SELECT partitions FROM shop.settings_seen").collect()[0][0] == "7"
    assert spark.conf.get("spark.sql.shuffle.partitions") == before  # set back after the model's job
    assert [r[0] for r in spark.sql("SELECT n FROM vu_log.calls").collect()] == [1]  # the view, once promoted
