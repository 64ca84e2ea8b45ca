"""A unit test input named without a schema feeds every table the model's query names so, a CTE of that name
included, as SQLMesh does (its fixture replaces those references); a bare name the query does not use is unused.
A name of four parts is refused at its line (SQLMesh's test errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.execution.unit_tests import run_unit_tests
from dagster_sparkmesh.project.loader import load_project

MODEL = """MODEL (name s.m, kind FULL);
WITH source_data AS (SELECT '7' AS id)
SELECT CAST(source_data.id AS INT) AS id FROM source_data
"""

TESTS = """
test_cte_fed:
  model: s.m
  inputs:
    Source_Data:
      - id: "101"
      - id: "102"
  outputs:
    query:
      - id: 101
      - id: 102

test_cte_fed_wrong_expectation:
  model: s.m
  inputs:
    source_data:
      - id: "101"
  outputs:
    query:
      - id: 7

test_unused_bare_name:
  model: s.m
  inputs:
    nothing_here:
      - id: "101"
  outputs:
    query:
      - id: 7
"""


def _project(path: Path, tests: str = TESTS) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "tests").mkdir()
    (path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n  start: '2025-01-01'\n")
    (path / "models" / "m.sql").write_text(MODEL)
    (path / "tests" / "test_m.yaml").write_text(tests)
    return path


def test_the_project_loads_with_bare_input_names(tmp_path):
    project = load_project(_project(tmp_path / "p"), use_cache=False)
    assert {test.name: [name for name, _ in test.inputs] for test in project.unit_tests} == {
        "test_cte_fed": ["source_data"],
        "test_cte_fed_wrong_expectation": ["source_data"],
        "test_unused_bare_name": ["nothing_here"],
    }
    assert [warning for warning in project.warnings if "unit test" in warning] == []


def test_a_bare_input_feeds_the_cte_of_its_name(tmp_path, make_context, clean_catalog, spark):
    results = {r.name: r for r in run_unit_tests(make_context(_project(tmp_path / "p")))}
    assert {name: (result.passed, result.message) for name, result in results.items()} == {
        "test_cte_fed": (True, ""),
        "test_cte_fed_wrong_expectation": (False, "expected 1 row(s) [(7,)], got 1 row(s) [(101,)]"),
        "test_unused_bare_name": (True, ""),
    }


def test_a_name_of_four_parts_is_refused_at_its_line(tmp_path):
    tests = "t:\n  model: s.m\n  inputs:\n    a.b.c.d:\n      - {id: 1}\n  outputs:\n    query: []\n"
    with pytest.raises(ProjectError) as raised:
        load_project(_project(tmp_path / "p", tests), use_cache=False)
    assert raised.value.line == 4
    assert "is not of the form name, schema.name or catalog.schema.name" in raised.value.message
