"""A model that reads its own name reads its own earlier intervals (a running total), as in SQLMesh, on Spark."""

from datetime import date, datetime

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for

RUNNING_TOTAL = """
MODEL (
  name shop.running_total,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds),
  columns (ds DATE, total BIGINT)
);

SELECT d.ds, d.total + COALESCE(prev.total, 0) AS total
FROM shop.daily AS d
LEFT JOIN shop.running_total AS prev ON prev.ds = date_sub(d.ds, 1)
WHERE d.ds BETWEEN @start_ds AND @end_ds
"""


def _totals(spark) -> list[tuple[date, int]]:
    return [tuple(r) for r in spark.sql("SELECT ds, total FROM shop.running_total ORDER BY ds").collect()]


def test_a_running_total_reads_its_own_earlier_days_one_at_a_time(spark, mini_project, make_context):
    (mini_project / "models" / "running_total.sql").write_text(RUNNING_TOTAL)
    ctx = make_context(mini_project)
    plan = plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 4))
    assert "shop.running_total" not in ctx.project.models["shop.running_total"].depends_on
    apply_plan(ctx, plan)
    # shop.daily is 60 a day: each day adds it to the day before.
    assert _totals(spark) == [(date(2024, 1, 1), 60), (date(2024, 1, 2), 120), (date(2024, 1, 3), 180)]

    # Restating 01-02 recomputes every later day too (they read it), and gives the same answer.
    ctx = make_context(mini_project)
    again = plan_for(ctx, datetime(2024, 1, 2), datetime(2024, 1, 3), restate_models=["shop.running_total"])
    assert [i.start.day for i in again.missing_intervals["shop.running_total"]] == [2, 3]
    apply_plan(ctx, again)
    assert _totals(spark)[-1] == (date(2024, 1, 3), 180)


RUNS = '''
import pandas as pd
from dagster_sparkmesh import model


@model("shop.runs", kind="FULL", columns={"run": "int"})
def execute(context, start, end, execution_time, **kwargs):
    previous = context.fetchdf(f"SELECT COUNT(*) AS n FROM {context.resolve_table('shop.runs')}")["n"][0]
    return pd.DataFrame({"run": [int(previous) + 1]})
'''


def test_a_python_model_reads_its_own_table_from_its_first_run(spark, mini_project, make_context):
    (mini_project / "models" / "runs.py").write_text(RUNS)
    ctx = make_context(mini_project)
    assert ctx.project.models["shop.runs"].depends_on_self
    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 2)))
    assert [r[0] for r in spark.sql("SELECT run FROM shop.runs").collect()] == [1]  # it read an empty table
