"""What another dialect writes and Spark 4 can run does run: BigQuery's ``SELECT * EXCEPT (...)`` drops the column."""

from datetime import datetime

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for

MODEL = """
MODEL (name shop.daily_totals, kind FULL, dialect bigquery);

SELECT * EXCEPT (orders) FROM shop.daily
"""


def test_star_except_from_bigquery_runs_on_spark(spark, mini_project, make_context):
    (mini_project / "models" / "daily_totals.sql").write_text(MODEL)
    ctx = make_context(mini_project)
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))
    frame = spark.table("shop.daily_totals")
    assert sorted(frame.columns) == ["ds", "total"]  # orders is gone
    assert frame.count() == 2
