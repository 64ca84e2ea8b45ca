"""A project written the way SQLMesh's sushi example is (duckdb dialect, Python models generating days with
``range((end - start).days + 1)``, ``context.engine_adapter.dialect``, typed ``SQL`` macros, Jinja inside string
literals, a SEED file starting with its inline audits, an external table created by a pre-statement, a
self-referencing lifetime model, a blueprint, a disabled model) plans and applies on Spark, only its gateway
changed."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path


from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.state.store import open_state_store

FIXTURE = Path(__file__).parent / "projects" / "sushi_style"
START, END = datetime(2024, 1, 1), datetime(2024, 1, 4)  # three days


def test_a_sushi_style_project_plans_and_applies_on_spark(tmp_path: Path, spark, engine, clean_catalog) -> None:
    project = tmp_path / "sushi_style"
    shutil.copytree(FIXTURE, project)
    loaded = load_project(project)
    assert "ss_shop.disabled" not in loaded.models
    store = open_state_store(None, project)
    try:
        ctx = ExecutionContext(project=loaded, state=store, environment="prod", engine_factory=lambda: engine,
                               clock=lambda: END)
        apply_plan(ctx, plan_for(ctx, START, END))
    finally:
        store.close()

    def rows(sql: str) -> list[tuple]:
        return sorted(tuple(row) for row in spark.sql(sql).collect())

    days = ["2024-01-01", "2024-01-02", "2024-01-03"]
    # The inclusive end: three days of two orders each, never a fourth (empty) day.
    assert rows("SELECT CAST(event_date AS STRING), COUNT(*) FROM ss_shop.orders GROUP BY 1") == [(d, 2) for d in days]
    assert rows("SELECT COUNT(*) FROM ss_shop.order_items") == [(6,)]
    assert rows("SELECT customer_id, zip, status FROM ss_shop.customers") == [(1, "00000", "active"), (2, None, "inactive")]
    assert rows("SELECT customer_id, revenue FROM ss_shop.customer_revenue_by_day") == [(1, 10.0)] * 3 + [(2, 10.0)] * 3
    assert rows("SELECT customer_id, CAST(event_date AS STRING), revenue FROM ss_shop.customer_revenue_lifetime") == [
        (customer, day, 10.0 * (index + 1)) for customer in (1, 2) for index, day in enumerate(days)
    ]
    assert rows("SELECT waiter_name, revenue FROM ss_shop.waiter_revenue_by_day") == [("Toby", 10.0)] * 3 + [("Tyson", 10.0)] * 3
    assert rows("SELECT waiter_id, two, revenue_text FROM ss_shop.top_waiters") == [(0, 2, "10.0"), (1, 2, "10.0")]
    assert rows("SELECT count_customers FROM ss_shop.count_customers_active") == [(1,)]
    assert rows("SELECT count_customers FROM ss_shop.count_customers_inactive") == [(1,)]
