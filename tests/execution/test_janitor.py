"""The janitor drops what only an expired environment referenced, and nothing prod still uses."""

from datetime import timedelta

from dagster_sparkmesh.clock import utc_now
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.janitor import run_janitor
from dagster_sparkmesh.snapshot.naming import physical_table
from tests.execution.test_apply import END, START


def test_janitor_removes_invalidated_dev_and_its_tables_but_keeps_prod(spark, mini_project, make_context):
    prod = make_context(mini_project)
    prod_plan = plan_for(prod, START, END)
    apply_plan(prod, prod_plan)

    daily = mini_project / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("SUM(amount) AS total", "SUM(amount) + 1 AS total"))
    dev = make_context(mini_project, "dev")
    dev_plan = plan_for(dev, START, END)
    apply_plan(dev, dev_plan)
    dev_only_table = physical_table("shop.daily", dev_plan.version_of("shop.daily"))
    assert spark.catalog.tableExists(dev_only_table)

    dev.state.invalidate_environment("dev")
    dev.clock = lambda: utc_now() + timedelta(days=30)  # invalidation stamps the state store's real clock
    report = run_janitor(dev)

    assert report.environments_dropped == ("dev",)
    assert not spark.catalog.databaseExists("shop__dev")
    assert dev_only_table in report.tables_dropped
    assert not spark.catalog.tableExists(dev_only_table)
    assert dev.state.get_environment("dev") is None
    assert dev.state.get_intervals("shop.daily", dev_plan.version_of("shop.daily")) == []
    for name in ("raw.events", "shop.daily", "shop.summary"):
        assert spark.catalog.tableExists(physical_table(name, prod_plan.version_of(name)))
    assert spark.sql("SELECT grand_total FROM shop.summary").collect()[0][0] == 300


def test_janitor_leaves_an_expired_environment_alone_while_a_promotion_holds_its_lease(engine, mini_project, make_context):
    from datetime import datetime

    from dagster_sparkmesh.snapshot.records import Environment, EnvironmentSnapshot

    ctx = make_context(mini_project, "dev")
    expired = Environment(
        name="dev",
        plan_id="p1",
        snapshots=(EnvironmentSnapshot(name="db.a", fingerprint="f1", version="v1", kind_name="FULL"),),
        start=datetime(2024, 1, 1),
        promoted_at=datetime(2024, 1, 1),
        expires_at=datetime(2024, 1, 2),
    )
    ctx.state.promote_environment(expired, None)
    lease = ctx.state.acquire_promotion_lease("dev", "p2")
    assert run_janitor(ctx).environments_dropped == ()
    assert ctx.state.get_environment("dev") == expired

    ctx.clock = lambda: lease.expires_at  # the promotion died: its lease lapsed
    assert run_janitor(ctx).environments_dropped == ("dev",)
    assert ctx.state.get_environment("dev") is None
