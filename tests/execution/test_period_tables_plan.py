"""Period tables (the default) through plans: a backfill, then a one-day run into the same month, give the same view
rows as a fresh build of the same files in the day-partitioned layout (``SPARKMESH_PERIOD_TABLES=0``)."""

from datetime import timedelta

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.records import Interval
from tests.execution.test_apply import END, START


def _daily_rows(spark) -> list[tuple]:
    """By name: a table partitioned by its time column lists that column last, a period table as the query does."""
    return [tuple(sorted(row.asDict().items())) for row in spark.sql("SELECT * FROM shop.daily ORDER BY ds").collect()]


def test_a_period_table_backfilled_then_run_for_a_day_holds_what_a_fresh_build_holds(
    spark, mini_project, make_context, monkeypatch
):
    monkeypatch.delenv("SPARKMESH_PERIOD_TABLES", raising=False)
    ctx = make_context(mini_project)
    plan = plan_for(ctx, START, END - timedelta(days=1))
    apply_plan(ctx, plan)
    apply_plan(ctx, plan_for(ctx, START, END))  # the last day only: a segment of its own
    table = plan.tables(())["shop.daily"]
    assert ctx.engine.catalog.view_exists(table) and ctx.engine.catalog.table_exists(f"{table}__data")
    segments = {row[0] for row in ctx.engine.catalog.query_rows(f"SHOW PARTITIONS {table}__data")}
    assert segments and all(segment.startswith("sparkmesh_month=") for segment in segments)
    with_periods = _daily_rows(spark)
    assert len(with_periods) == (END - START).days

    monkeypatch.setenv("SPARKMESH_PERIOD_TABLES", "0")
    ctx.engine.drop_physical(table, is_view=False)
    ctx.state.remove_intervals("shop.daily", plan.version_of("shop.daily"), Interval(start=START, end=END))
    apply_plan(ctx, plan_for(ctx, START, END))  # the fresh build, day partitions
    assert ctx.engine.catalog.table_exists(table) and ctx.engine.catalog.partition_columns(table) == ["ds"]
    assert _daily_rows(spark) == with_periods
