"""A unit test whose Python model raises (in its own code, or through a DataFrame Spark cannot analyze) is reported as
that test's error, with the model's file and line and the exception, and the other tests still run, as SQLMesh's
`sqlmesh test` reports an erroring test ("ERROR: test_boom") and goes on; the run exits 2, without a traceback.
Code that tries to end the process fails the test too, never ending the run with exit code 0."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke

RAISING_MODEL = '''from sqlmesh import model


@model("t.boom", kind="FULL", columns={"n": "int"})
def execute(context, start, end, execution_time, **kwargs):
    rows = context.fetchdf(f"SELECT n FROM {context.resolve_table('t.src')}")
    sizes = {"small": 1}
    return rows.assign(n=sizes["large"])
'''
RAISING_LINE = 8

UNANALYZABLE_MODEL = '''from sqlmesh import model


@model("t.boom", kind="FULL", columns={"n": "int"})
def execute(context, start, end, execution_time, **kwargs):
    return context.spark.table(context.resolve_table("t.src")).selectExpr("no_such_column AS n")
'''

TESTS = """test_boom:
  model: t.boom
  inputs:
    t.src:
      rows: [{n: 1}]
  outputs:
    query:
      rows: [{n: 1}]

test_doubled:
  model: t.doubled
  inputs:
    t.src:
      rows: [{n: 1}, {n: 2}]
  outputs:
    query:
      rows: [{n: 2}, {n: 4}]
"""


def _project(folder: Path, python_model: str) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (folder / "models" / "src.sql").write_text("MODEL (name t.src, kind FULL);\nSELECT 1 AS n\n")
    (folder / "models" / "doubled.sql").write_text("MODEL (name t.doubled, kind FULL);\nSELECT n * 2 AS n FROM t.src\n")
    (folder / "models" / "boom.py").write_text(python_model)
    (folder / "tests" / "test_models.yaml").write_text(TESTS)
    return folder


def _no_test_views_left(engine) -> bool:
    return not [row for row in engine.catalog.query_rows("SHOW VIEWS") if str(row[1]).startswith("sparkmesh_test_")]


def test_a_python_model_raising_in_its_code_fails_its_test_and_the_others_run(tmp_path, engine, clean_catalog):
    project = _project(tmp_path / "p", RAISING_MODEL)
    result, _ = invoke(project, ["test"], engine)

    assert result.exit_code == 2, result.output
    model_file = project / "models" / "boom.py"
    assert "FAIL test_boom (t.boom)" in result.output
    assert f"error: {model_file}:{RAISING_LINE}: Python model t.boom raised KeyError: 'large'" in result.output
    assert "PASS test_doubled (t.doubled)" in result.output
    assert "1 of 2 unit test(s) failed" in result.output
    assert "Traceback" not in result.output
    assert _no_test_views_left(engine)


def test_a_python_model_whose_dataframe_spark_cannot_analyze_fails_its_test(tmp_path, engine, clean_catalog):
    project = _project(tmp_path / "p", UNANALYZABLE_MODEL)
    result, _ = invoke(project, ["test"], engine)

    assert result.exit_code == 2, result.output
    assert "FAIL test_boom (t.boom)" in result.output
    assert f"error: {project / 'models' / 'boom.py'}:" in result.output
    assert "no_such_column" in result.output and "UNRESOLVED_COLUMN" in result.output
    assert "PASS test_doubled (t.doubled)" in result.output
    assert "1 of 2 unit test(s) failed" in result.output
    assert "Traceback" not in result.output and "\tat org.apache" not in result.output


def test_a_raising_python_model_stops_the_plan_with_its_error(tmp_path, engine, clean_catalog):
    project = _project(tmp_path / "p", RAISING_MODEL)
    result, _ = invoke(project, ["plan", "--auto-apply", "--end", "2024-01-02"], engine)

    assert result.exit_code == 2, result.output
    assert "1 of 2 unit test(s) of the changed models failed: the plan stops here" in result.output
    assert "Python model t.boom raised KeyError: 'large'" in result.output
    assert "Traceback" not in result.output


def test_a_python_model_calling_sys_exit_fails_its_test_instead_of_ending_the_run(tmp_path, engine, clean_catalog):
    exiting = RAISING_MODEL.replace('    sizes = {"small": 1}\n', "    import sys\n    sys.exit(0)\n")
    project = _project(tmp_path / "p", exiting)
    result, _ = invoke(project, ["test"], engine)

    assert result.exit_code == 2, result.output
    assert "Python model t.boom called sys.exit(0): project code must not end the process" in result.output
    assert "PASS test_doubled (t.doubled)" in result.output
    assert "1 of 2 unit test(s) failed" in result.output


def test_a_keyboard_interrupt_in_a_python_model_stops_the_run_with_a_failing_code(tmp_path, engine, clean_catalog):
    interrupted = RAISING_MODEL.replace('    sizes = {"small": 1}\n', "    raise KeyboardInterrupt\n")
    project = _project(tmp_path / "p", interrupted)
    result, _ = invoke(project, ["test"], engine)

    assert result.exit_code not in (0, None), result.output
    assert "unit test(s) passed" not in result.output
    assert _no_test_views_left(engine)


def test_a_backfill_of_a_raising_python_model_names_the_line_that_raised(tmp_path, engine, clean_catalog):
    project = _project(tmp_path / "p", RAISING_MODEL)
    result, _ = invoke(project, ["plan", "--auto-apply", "--skip-tests", "--end", "2024-01-02"], engine)

    assert result.exit_code == 2, result.output
    model_file = project / "models" / "boom.py"
    assert (f"{model_file}:{RAISING_LINE}: backfill failed for t.boom: Python model t.boom raised KeyError: 'large'"
            in result.output)
    assert 'return rows.assign(n=sizes["large"])' in result.output
    assert "Traceback" not in result.output
