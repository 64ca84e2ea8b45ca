"""Unit tests with expected rows of named CTEs (``outputs: ctes:``) and inputs/outputs given as SQL (``query:``)."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.execution.unit_tests import run_unit_tests

MODEL = """
MODEL (name shop.item_orders, kind FULL);

WITH orders AS (
  SELECT id, item_id FROM raw.orders
), first_item AS (
  SELECT id, item_id FROM orders WHERE item_id = 1
)
SELECT item_id, COUNT(DISTINCT id) AS num_orders FROM first_item GROUP BY item_id
"""

TESTS = """
test_rows_and_ctes:
  model: shop.item_orders
  inputs:
    raw.orders:
      rows: [{id: 1, item_id: 1}, {id: 2, item_id: 1}, {id: 3, item_id: 2}]
  outputs:
    ctes:
      first_item:
        rows: [{id: 1, item_id: 1}, {id: 2, item_id: 1}]
      orders:
        partial: true
        rows: [{id: 3}, {id: 2}, {id: 1}]
    query: [{item_id: 1, num_orders: 2}]

test_queries_everywhere:
  model: shop.item_orders
  inputs:
    raw.orders:
      query: SELECT * FROM VALUES (7, 1), (8, 1), (9, 3) AS t(id, item_id)
  outputs:
    ctes:
      first_item:
        query: SELECT * FROM VALUES (7, 1), (8, 1) AS t(id, item_id)
    query: SELECT 1 AS item_id, 2L AS num_orders

test_a_column_left_out_is_expected_null:
  model: shop.item_orders
  inputs:
    raw.orders: [{id: 1, item_id: 1}]
  outputs:
    query: [{item_id: 1}]

test_every_output_partial:
  model: shop.item_orders
  inputs:
    raw.orders: [{id: 1, item_id: 1}]
  outputs:
    partial: true
    ctes:
      orders: [{id: 1}]
    query: [{item_id: 1}]

test_ctes_only_and_wrong:
  model: shop.item_orders
  inputs:
    raw.orders: [{id: 1, item_id: 1}]
  outputs:
    ctes:
      first_item: [{id: 5, item_id: 1}]
      no_such_cte: []
"""


def _project(path: Path) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "tests").mkdir()
    (path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (path / "external_models.yaml").write_text("- name: raw.orders\n  columns: {id: int, item_id: int}\n")
    (path / "models" / "item_orders.sql").write_text(MODEL)
    (path / "tests" / "test_item_orders.yaml").write_text(TESTS)
    return path


def test_ctes_and_sql_inputs_and_outputs(tmp_path, make_context, clean_catalog):
    results = {r.name: r for r in run_unit_tests(make_context(_project(tmp_path / "p")))}
    assert results["test_rows_and_ctes"].passed, results["test_rows_and_ctes"].message
    assert results["test_queries_everywhere"].passed, results["test_queries_everywhere"].message
    wrong = results["test_ctes_only_and_wrong"]
    assert not wrong.passed
    assert wrong.message == (
        "CTE first_item: expected 1 row(s) [(5, 1)], got 1 row(s) [(1, 1)]; "
        "the model's query has no CTE named no_such_cte (its CTEs: orders, first_item)"
    )
    # As SQLMesh 0.236.4 judges them: a column the expected rows leave out is expected NULL, unless partial.
    assert results["test_a_column_left_out_is_expected_null"].message == "expected 1 row(s) [(1, None)], got 1 row(s) [(1, 1)]"
    assert results["test_every_output_partial"].passed, results["test_every_output_partial"].message
