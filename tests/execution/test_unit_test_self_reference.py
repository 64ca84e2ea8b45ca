"""Unit tests of a model that reads its own table, as in SQLMesh: the test stands in for that table too, empty
unless the test gives it rows (sushi's ``test_customer_revenue_lifetime`` names no input for it)."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.execution.unit_tests import run_unit_tests

MODEL = """
MODEL (
  name shop.lifetime,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 1),
  start '2000-01-01',
  columns (customer_id INT, revenue DOUBLE, ds DATE)
);

WITH today AS (
  SELECT customer_id, SUM(amount) AS revenue FROM raw.orders WHERE ds = @end_date GROUP BY customer_id
), prev AS (
  SELECT customer_id, revenue FROM shop.lifetime WHERE ds = @end_date - INTERVAL 1 DAY
)
SELECT
  COALESCE(t.customer_id, p.customer_id) AS customer_id,
  COALESCE(t.revenue, 0) + COALESCE(p.revenue, 0) AS revenue,
  @end_date AS ds
FROM today AS t FULL OUTER JOIN prev AS p ON t.customer_id = p.customer_id
"""

TESTS = """
test_own_table_not_given:
  model: shop.lifetime
  vars: {end: 2000-01-02}
  inputs:
    raw.orders: [{customer_id: 1, amount: 2.5, ds: 2000-01-02}, {customer_id: 1, amount: 1.0, ds: 2000-01-01}]
  outputs:
    query: [{customer_id: 1, revenue: 2.5, ds: 2000-01-02}]

test_own_table_given:
  model: shop.lifetime
  vars: {start: 2000-01-02, end: 2000-01-02}
  inputs:
    raw.orders: [{customer_id: 1, amount: 2.5, ds: 2000-01-02}]
    shop.lifetime: [{customer_id: 1, revenue: 10.0, ds: 2000-01-01}, {customer_id: 2, revenue: 4.0, ds: 2000-01-01}]
  outputs:
    query: [{customer_id: 1, revenue: 12.5, ds: 2000-01-02}, {customer_id: 2, revenue: 4.0, ds: 2000-01-02}]
"""


def _project(path: Path) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "tests").mkdir()
    (path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (path / "external_models.yaml").write_text(
        "- name: raw.orders\n  columns: {customer_id: int, amount: double, ds: date}\n"
    )
    (path / "models" / "lifetime.sql").write_text(MODEL)
    (path / "tests" / "test_lifetime.yaml").write_text(TESTS)
    return path


def test_a_self_reading_model_reads_its_test_inputs(tmp_path, make_context, clean_catalog, spark):
    results = {r.name: r for r in run_unit_tests(make_context(_project(tmp_path / "p")))}
    assert results["test_own_table_not_given"].passed, results["test_own_table_not_given"].message
    assert results["test_own_table_given"].passed, results["test_own_table_given"].message
    # The stand-in tables were the test's own: none is left in the session, no real table was created.
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("sparkmesh_test_")]
    assert "shop" not in {row[0] for row in spark.sql("SHOW DATABASES").collect()}
