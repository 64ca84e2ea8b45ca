"""A unit test's interval when its ``vars`` leave bounds out, as in SQLMesh: the start is the epoch, so a test
giving only ``end`` covers every row up to that day (sushi's tests say ``vars: {end: 2000-01-02}``)."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.execution.unit_tests import run_unit_tests

MODEL = """
MODEL (name shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), start '2000-01-01');

SELECT ds, COUNT(*) AS orders FROM raw.orders WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds
"""

TESTS = """
test_only_an_end:
  model: shop.daily
  vars: {end: 2000-01-02}
  inputs:
    raw.orders: [{id: 1, ds: 2000-01-01}, {id: 2, ds: 2000-01-02}, {id: 3, ds: 2000-01-02}, {id: 4, ds: 2000-01-03}]
  outputs:
    query: [{ds: 2000-01-01, orders: 1}, {ds: 2000-01-02, orders: 2}]

test_no_bounds_at_all:
  model: shop.daily
  inputs:
    raw.orders: [{id: 1, ds: 1970-01-01}, {id: 2, ds: 2000-01-01}]
  outputs:
    query: [{ds: 1970-01-01, orders: 1}]
"""


def _project(path: Path) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "tests").mkdir()
    (path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (path / "external_models.yaml").write_text("- name: raw.orders\n  columns: {id: int, ds: date}\n")
    (path / "models" / "daily.sql").write_text(MODEL)
    (path / "tests" / "test_daily.yaml").write_text(TESTS)
    return path


def test_a_test_without_a_start_starts_at_the_epoch(tmp_path, make_context, clean_catalog):
    results = {r.name: r for r in run_unit_tests(make_context(_project(tmp_path / "p")))}
    assert results["test_only_an_end"].passed, results["test_only_an_end"].message
    assert results["test_no_bounds_at_all"].passed, results["test_no_bounds_at_all"].message
