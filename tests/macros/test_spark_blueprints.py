"""A blueprint model on Spark: ``blueprints (...)`` makes one model per blueprint, and plan + apply writes each
one's own rows into its own table."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path


from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.state.store import open_state_store

START, END = datetime(2024, 1, 1), datetime(2024, 1, 4)

ORDERS = """MODEL (name bp_raw.orders, kind FULL);

SELECT * FROM VALUES
  ('2024-01-01', 'east', 10), ('2024-01-01', 'west', 1),
  ('2024-01-02', 'east', 20), ('2024-01-02', 'east', 5),
  ('2024-01-03', 'west', 7)
  AS t(ds, region, amount)
"""

BLUEPRINT = """MODEL (
  name @schema.daily_orders,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 1),
  blueprints (
    (schema := bp_east, region := 'east', factor := 1),
    (schema := bp_west, region := 'west', factor := 100)
  )
);

SELECT
  ds,
  @BLUEPRINT_VAR('region') AS region,
  SUM(amount) * @factor AS amount
FROM bp_raw.orders
WHERE region = @region AND ds BETWEEN @start_ds AND @end_ds
GROUP BY ds
"""


def _project(root: Path) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (root / "models" / "orders.sql").write_text(ORDERS)
    (root / "models" / "daily_orders.sql").write_text(BLUEPRINT)
    return root


def test_each_blueprint_is_its_own_table_with_its_own_rows(tmp_path: Path, spark, engine, clean_catalog) -> None:
    project = load_project(_project(tmp_path / "blueprints"))
    assert {"bp_east.daily_orders", "bp_west.daily_orders"} <= set(project.models)
    store = open_state_store(None, project.path)
    try:
        ctx = ExecutionContext(project=project, state=store, environment="prod", engine_factory=lambda: engine,
                               clock=lambda: END)
        apply_plan(ctx, plan_for(ctx, START, END))
    finally:
        store.close()

    def rows(table: str) -> list[tuple]:
        return sorted(tuple(row) for row in spark.sql(f"SELECT ds, region, amount FROM {table}").collect())

    assert rows("bp_east.daily_orders") == [("2024-01-01", "east", 10), ("2024-01-02", "east", 25)]
    assert rows("bp_west.daily_orders") == [("2024-01-01", "west", 100), ("2024-01-03", "west", 700)]
