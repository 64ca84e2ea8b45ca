"""A unit test whose inputs name tables its model does not read: SQLMesh makes fixtures of them and runs the test,
so the project loads (with a warning naming the file and line) and the test runs on the inputs the model reads.
From marcraminv/workshop-sqlmesh, whose Python model's test lists a view model it does not read."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.execution.unit_tests import run_unit_tests
from dagster_sparkmesh.project.loader import load_project

PYTHON_MODEL = '''
import pandas as pd
from sqlmesh import ExecutionContext, model


@model("core.basic_python", cron="@daily", columns={"id": "int", "name": "text"})
def execute(context: ExecutionContext, start, end, execution_time, **kwargs) -> pd.DataFrame:
    return pd.DataFrame([{"id": 1, "name": "Marc"}])
'''

TESTS = """
test_python_model_is_working:
  model: core.basic_python
  inputs:
    core.view:
      rows:
      - total: 1
  outputs:
    query:
      rows:
      - id: 1
        name: "Marc"

test_sql_model_with_extra_inputs:
  model: core.view
  inputs:
    core.events:
      - {id: 1}
      - {id: 2}
    raw.not_in_the_project:
      - {x: 1}
  outputs:
    query:
      - {total: 2}
"""


def _project(path: Path) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "tests").mkdir()
    (path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n  start: '2024-11-01'\n")
    (path / "external_models.yaml").write_text("- name: core.events\n  columns: {id: int}\n")
    (path / "models" / "python_model.py").write_text(PYTHON_MODEL)
    (path / "models" / "view_model.sql").write_text(
        "MODEL (name core.view, kind VIEW);\nSELECT COUNT(id) AS total FROM core.events\n"
    )
    (path / "tests" / "test_python_model.yaml").write_text(TESTS)
    return path


def test_the_project_loads_and_says_which_inputs_are_unused(tmp_path):
    project = load_project(_project(tmp_path / "p"), use_cache=False)
    assert [warning for warning in project.warnings if "unit test" in warning] == [
        "test_python_model.yaml:5: input core.view of unit test test_python_model_is_working is not read by "
        "core.basic_python (it reads: nothing): unused, as in SQLMesh",
        "test_python_model.yaml:20: input raw.not_in_the_project of unit test test_sql_model_with_extra_inputs is "
        "not a model of the project (check the model name (schema.name)): unused, as in SQLMesh",
    ]


def test_the_tests_run_and_pass(tmp_path, make_context, clean_catalog, spark):
    results = {r.name: r for r in run_unit_tests(make_context(_project(tmp_path / "p")))}
    assert {name: (result.passed, result.message) for name, result in results.items()} == {
        "test_python_model_is_working": (True, ""),
        "test_sql_model_with_extra_inputs": (True, ""),
    }
