"""Unit tests of Python models, as in SQLMesh: the model's function is called with the test's inputs standing
for the tables it reads (``context.resolve_table``) and the test's interval; its rows are compared."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.execution.unit_tests import run_unit_tests

MODEL = '''
from datetime import timedelta

import pandas as pd
from sqlmesh import model


@model(
    "shop.order_sizes",
    kind=dict(name="INCREMENTAL_BY_TIME_RANGE", time_column="ds"),
    start="2022-01-01",
    columns={"order_id": "int", "items": "int", "ds": "date"},
)
def execute(context, start, end, execution_time, **kwargs):
    items = context.resolve_table("raw.order_items")
    for day in range((end - start).days + 1):  # one frame per day, as sushi's order_items yields them
        ds = (start + timedelta(days=day)).date()
        rows = context.fetchdf(
            f"SELECT order_id, COUNT(*) AS items FROM {items} WHERE ds = DATE'{ds}' GROUP BY order_id"
        )
        yield pd.DataFrame({"order_id": rows["order_id"], "items": rows["items"], "ds": ds})
'''

TESTS = """
test_two_days:
  model: shop.order_sizes
  vars: {start: 2022-01-01, end: 2022-01-02}
  inputs:
    raw.order_items:
      - {order_id: 1, item_id: 7, ds: 2022-01-01}
      - {order_id: 1, item_id: 8, ds: 2022-01-01}
      - {order_id: 2, item_id: 7, ds: 2022-01-02}
      - {order_id: 3, item_id: 7, ds: 2022-01-03}
  outputs:
    query:
      - {order_id: 1, items: 2, ds: 2022-01-01}
      - {order_id: 2, items: 1, ds: 2022-01-02}

test_wrong_expectation:
  model: shop.order_sizes
  vars: {start: 2022-01-01, end: 2022-01-01}
  inputs:
    raw.order_items: [{order_id: 1, item_id: 7, ds: 2022-01-01}]
  outputs:
    query: [{order_id: 1, items: 5, ds: 2022-01-01}]
"""


def _project(path: Path) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "tests").mkdir()
    (path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (path / "external_models.yaml").write_text(
        "- name: raw.order_items\n  columns: {order_id: int, item_id: int, ds: date}\n"
    )
    (path / "models" / "order_sizes.py").write_text(MODEL)
    (path / "tests" / "test_order_sizes.yaml").write_text(TESTS)
    return path


def test_a_python_model_is_unit_tested_on_its_inputs(tmp_path, make_context, clean_catalog, spark):
    results = {r.name: r for r in run_unit_tests(make_context(_project(tmp_path / "p")))}
    assert results["test_two_days"].passed, results["test_two_days"].message
    wrong = results["test_wrong_expectation"]
    assert not wrong.passed
    assert wrong.message == "expected 1 row(s) [(1, 5, '2022-01-01')], got 1 row(s) [(1, 1, '2022-01-01')]"
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("sparkmesh_test_")]
