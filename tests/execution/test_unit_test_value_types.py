"""A unit test's values take the types of the columns they stand for, as in SQLMesh: input rows are cast to the
upstream model's column types (declared, or known from its query), and an expected date or time is read as the
type of the output column. Values that really differ still fail."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.execution.unit_tests import run_unit_tests

TESTS = """
test_expected_timestamp_text_for_date_column:
  model: s.passthru
  inputs:
    s.up:
      - {id: 1, d: "2026-08-22", amount: 100.00}
  outputs:
    query:
      - {id: 1, d: "2026-08-22 00:00:00", amount: 100.00}

test_input_timestamp_text_for_date_column:
  model: s.agg
  inputs:
    s.up:
      - {id: 1, d: "2026-08-22 00:00:00", amount: 100.00}
      - {id: 2, d: "2026-08-22 00:00:00", amount: 1.50}
  outputs:
    query:
      - {d: "2026-08-22", total: 101.50}

test_expected_date_text_for_timestamp_column:
  model: s.stamped
  inputs:
    s.up:
      - {id: 1, d: 2026-08-22, amount: 1}
  outputs:
    query:
      - {id: 1, t: "2026-08-22"}

test_another_day_still_fails:
  model: s.passthru
  inputs:
    s.up:
      - {id: 1, d: "2026-08-22", amount: 100.00}
  outputs:
    query:
      - {id: 1, d: "2026-08-23 00:00:00", amount: 100.00}

test_another_time_still_fails:
  model: s.stamped
  inputs:
    s.up:
      - {id: 1, d: 2026-08-22, amount: 1}
  outputs:
    query:
      - {id: 1, t: "2026-08-22 01:00:00"}
"""


def _project(path: Path) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "tests").mkdir()
    (path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n  start: '2025-01-01'\n")
    models = {
        "up": "SELECT 1 AS id, CAST('2026-08-22' AS DATE) AS d, CAST(100.00 AS DECIMAL(10,2)) AS amount",
        "passthru": "SELECT id, d, amount FROM s.up",
        "agg": "SELECT d, SUM(amount) AS total FROM s.up GROUP BY d",
        "stamped": "SELECT id, CAST(d AS TIMESTAMP) AS t FROM s.up",
    }
    for name, query in models.items():
        (path / "models" / f"{name}.sql").write_text(f"MODEL (name s.{name}, kind FULL);\n{query}\n")
    (path / "tests" / "test_types.yaml").write_text(TESTS)
    return path


def test_values_compare_as_the_columns_types(tmp_path, make_context, clean_catalog, spark):
    results = {r.name: r for r in run_unit_tests(make_context(_project(tmp_path / "p")))}
    assert {name: (result.passed, result.message) for name, result in results.items()} == {
        "test_expected_timestamp_text_for_date_column": (True, ""),
        "test_input_timestamp_text_for_date_column": (True, ""),
        "test_expected_date_text_for_timestamp_column": (True, ""),
        "test_another_day_still_fails": (
            False, "expected 1 row(s) [(1, '2026-08-23', 100.0)], got 1 row(s) [(1, '2026-08-22', 100.0)]"),
        "test_another_time_still_fails": (
            False, "expected 1 row(s) [(1, '2026-08-22 01:00:00')], got 1 row(s) [(1, '2026-08-22 00:00:00')]"),
    }
