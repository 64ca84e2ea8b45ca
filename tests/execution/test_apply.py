"""End to end on real Spark: plan, apply to prod, change a model in dev, promote by swapping views."""

from datetime import datetime

import pytest

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.promotion import promote
from dagster_sparkmesh.snapshot.naming import physical_table

START, END = datetime(2024, 1, 1), datetime(2024, 1, 6)


def _rows(spark, sql):
    return [tuple(row) for row in spark.sql(sql).collect()]


def _view_target(spark, view):
    text = spark.sql(f"SHOW CREATE TABLE {view}").collect()[0][0].lower()
    return text.split("from", 1)[1].strip().replace("`", "")


def test_apply_prod_builds_tables_records_intervals_and_points_views(spark, mini_project, make_context):
    ctx = make_context(mini_project)
    plan = plan_for(ctx, START, END)
    assert set(plan.added) == {"raw.events", "shop.daily", "shop.summary", "shop.big_days"}

    result = apply_plan(ctx, plan)

    assert _rows(spark, "SELECT ds, total, orders FROM shop.daily ORDER BY ds")[0] == (
        datetime(2024, 1, 1).date(), 60, 3
    )
    assert _rows(spark, "SELECT COUNT(*) FROM shop.daily") == [(5,)]
    assert _rows(spark, "SELECT grand_total, days FROM shop.summary") == [(300, 5)]
    daily_version = plan.version_of("shop.daily")
    assert _view_target(spark, "shop.daily") == physical_table("shop.daily", daily_version)
    assert ctx.state.get_intervals("shop.daily", daily_version)[0].start == START
    assert ctx.state.get_intervals("shop.daily", daily_version)[-1].end == END
    assert ctx.state.get_environment("prod").plan_id == plan.plan_id
    assert result.rows_written > 0


def test_noop_plan_after_apply_needs_no_spark(mini_project, make_context):
    ctx = make_context(mini_project)
    apply_plan(ctx, plan_for(ctx, START, END))

    fresh = make_context(mini_project)
    plan = plan_for(fresh, START, END)
    assert plan.is_noop
    assert not fresh.engine_started


def test_dev_change_recomputes_only_changed_models_and_leaves_prod_alone(spark, mini_project, make_context):
    prod = make_context(mini_project)
    apply_plan(prod, plan_for(prod, START, END))
    prod_totals = _rows(spark, "SELECT ds, total FROM shop.daily ORDER BY ds")

    daily = mini_project / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("SUM(amount) AS total", "SUM(amount) * 2 AS total"))
    dev = make_context(mini_project, "dev")
    plan = plan_for(dev, START, END)
    assert plan.directly_modified == ("shop.daily",)
    assert set(plan.indirectly_modified) == {"shop.summary", "shop.big_days"}
    assert "raw.events" not in plan.missing_intervals

    result = apply_plan(dev, plan)
    computed = {m.model for m in result.models if not m.skipped}
    assert computed == {"shop.daily", "shop.summary", "shop.big_days"}
    assert _rows(spark, "SELECT ds, total FROM shop.daily ORDER BY ds") == prod_totals
    assert _rows(spark, "SELECT grand_total FROM shop__dev.summary") == [(600,)]

    to_prod = make_context(mini_project, "prod")
    prod_plan = plan_for(to_prod, START, END)
    assert not prod_plan.missing_intervals, "dev's tables are reused: promotion needs no recomputation"
    promotion = promote(to_prod, prod_plan)
    assert {change.model for change in promotion.views} == {"shop.daily", "shop.summary", "shop.big_days"}
    assert _rows(spark, "SELECT grand_total FROM shop.summary") == [(600,)]


def _tables(spark, schema):
    return {row.tableName for row in spark.sql(f"SHOW TABLES IN {schema}").collect()}


def test_a_dev_environment_has_views_of_its_changed_models_only(spark, mini_project, make_context):
    """SQLMesh's default (``plan.include_unmodified: false``); ``include_unmodified`` adds the others' views."""
    prod = make_context(mini_project)
    apply_plan(prod, plan_for(prod, START, END))
    summary = mini_project / "models" / "summary.sql"
    summary.write_text(summary.read_text().replace("SUM(total) AS grand_total", "SUM(total) + 1 AS grand_total"))
    dev = make_context(mini_project, "dev")
    plan = plan_for(dev, START, END)
    assert plan.directly_modified == ("shop.summary",)

    result = apply_plan(dev, plan)

    assert {change.view for change in result.promotion.views} == {"shop__dev.summary"}
    assert "daily" not in _tables(spark, "shop__dev") and "summary" in _tables(spark, "shop__dev")
    assert _rows(spark, "SELECT grand_total FROM shop__dev.summary") == [(301,)]  # read prod's daily table
    environment = dev.state.get_environment("dev")
    assert environment.relation_of("shop.daily") == physical_table("shop.daily", plan.version_of("shop.daily"))
    assert environment.relation_of("shop.summary") == "shop__dev.summary"

    everything = make_context(mini_project, "full")
    promoted = apply_plan(everything, plan_for(everything, START, END, include_unmodified=True))
    assert {change.view for change in promoted.promotion.views} == {
        "raw__full.events", "shop__full.daily", "shop__full.summary", "shop__full.big_days"
    }
    assert _rows(spark, "SELECT grand_total FROM shop__full.summary") == [(301,)]


def test_promotion_refuses_missing_intervals_and_changes_no_view(spark, mini_project, make_context):
    ctx = make_context(mini_project)
    apply_plan(ctx, plan_for(ctx, START, END))
    before = _view_target(spark, "shop.daily")

    daily = mini_project / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("COUNT(*) AS orders", "COUNT(*) AS orders, MAX(id) AS top_id"))
    changed = make_context(mini_project)
    plan = plan_for(changed, START, END)
    with pytest.raises(ExecutionError, match="missing intervals"):
        promote(changed, plan)
    assert _view_target(spark, "shop.daily") == before
    assert changed.state.get_environment("prod").plan_id != plan.plan_id


def test_promotion_refuses_when_a_physical_table_vanished(spark, mini_project, make_context):
    ctx = make_context(mini_project)
    plan = plan_for(ctx, START, END)
    apply_plan(ctx, plan, promote_after=False)
    # (a FULL model's physical table is a generation view, which Spark 4.1 drops only as a view)
    ctx.engine.drop_physical(physical_table("shop.summary", plan.version_of("shop.summary")), is_view=False)

    with pytest.raises(ExecutionError, match="not in the catalog"):
        promote(ctx, plan)
    assert not spark.catalog.databaseExists("shop") or not spark.catalog.tableExists("shop.daily")
