"""A unit test's ``vars:`` other than start, end and execution_time are variables of the model's rendering, as in
SQLMesh: ``@name`` and ``@VAR('name')`` read them, over the project's own variables; they no longer stop the load."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.execution.unit_tests import run_unit_tests
from dagster_sparkmesh.project.loader import load_project

TESTS = """
test_custom_vars:
  model: s.m
  vars:
    min_id: 2
    region: "eu"
  inputs:
    s.src:
      - {id: 1, region: eu}
      - {id: 2, region: eu}
      - {id: 3, region: us}
  outputs:
    query:
      - {id: 2, region: eu}

test_custom_vars_wrong_expectation:
  model: s.m
  vars:
    min_id: 1
    region: us
  inputs:
    s.src:
      - {id: 1, region: eu}
      - {id: 3, region: us}
  outputs:
    query:
      - {id: 1, region: eu}

test_python_model_reads_the_variable:
  model: s.py
  vars:
    region: eu
  outputs:
    query:
      - {region: eu}
"""

PYTHON_MODEL = '''
import pandas as pd
from sqlmesh import ExecutionContext, model


@model("s.py", kind="FULL", columns={"region": "string"})
def execute(context: ExecutionContext, start, end, execution_time, **kwargs) -> pd.DataFrame:
    return pd.DataFrame([{"region": context.var("region")}])
'''


def _project(path: Path, tests: str = TESTS) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "tests").mkdir()
    (path / "config.yaml").write_text(
        "model_defaults:\n  dialect: duckdb\n  start: '2024-11-01'\nvariables:\n  min_id: 100\n  region: none\n"
    )
    (path / "models" / "src.sql").write_text("MODEL (name s.src, kind FULL);\nSELECT 1 AS id, 'eu' AS region\n")
    (path / "models" / "m.sql").write_text(
        "MODEL (name s.m, kind FULL);\nSELECT id, region FROM s.src WHERE id >= @min_id AND region = @VAR('region')\n"
    )
    (path / "models" / "py.py").write_text(PYTHON_MODEL)
    (path / "tests" / "test_m.yaml").write_text(tests)
    return path


def test_the_project_loads_with_the_variables(tmp_path):
    project = load_project(_project(tmp_path / "p"), use_cache=False)
    test = next(test for test in project.unit_tests if test.name == "test_custom_vars")
    assert dict(test.variables) == {"min_id": 2, "region": "eu"}
    assert test.start is None


def test_the_variables_reach_the_query(tmp_path, make_context, clean_catalog, spark):
    results = {r.name: r for r in run_unit_tests(make_context(_project(tmp_path / "p")))}
    assert results["test_custom_vars"].passed, results["test_custom_vars"].message
    assert results["test_python_model_reads_the_variable"].passed, results["test_python_model_reads_the_variable"].message
    wrong = results["test_custom_vars_wrong_expectation"]
    assert not wrong.passed
    assert wrong.message == "expected 1 row(s) [(1, 'eu')], got 1 row(s) [(3, 'us')]"


def test_a_list_variable_is_refused_with_its_line(tmp_path):
    tests = "test_list:\n  model: s.m\n  vars:\n    ids: [1, 2]\n  outputs:\n    query: []\n"
    with pytest.raises(ProjectError) as raised:
        load_project(_project(tmp_path / "p", tests), use_cache=False)
    assert raised.value.line == 4
    assert "variable 'ids' of vars must be a text, number or boolean" in raised.value.message
