"""A plan runs the unit tests of the models it adds or changes first, and a failing one stops it before anything is
written, as SQLMesh's plan does ("Cannot generate plan due to failing test(s)"); --skip-tests skips them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from dagster_sparkmesh.state.store import open_state_store

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke

TEST = """test_doubled:
  model: t.doubled
  inputs:
    t.src:
      rows: [{n: 1}, {n: 2}]
  outputs:
    query:
      rows: [{n: 2}, {n: 4}]
"""


def _project(folder: Path, factor: int) -> Path:
    (folder / "models").mkdir(parents=True, exist_ok=True)
    (folder / "tests").mkdir(exist_ok=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (folder / "models" / "src.sql").write_text("MODEL (name t.src, kind FULL);\nSELECT 1 AS n\n")
    (folder / "models" / "doubled.sql").write_text(f"MODEL (name t.doubled, kind FULL);\nSELECT n * {factor} AS n FROM t.src\n")
    (folder / "tests" / "test_doubled.yaml").write_text(TEST)
    return folder


def test_a_failing_test_of_a_changed_model_stops_the_plan_and_skip_tests_goes_on(tmp_path, engine, clean_catalog):
    project = _project(tmp_path / "p", factor=2)
    passing, _ = invoke(project, ["plan", "--auto-apply", "--end", "2024-01-02"], engine)
    assert passing.exit_code == 0, passing.output
    assert "1 unit test(s) of the changed models passed" in passing.output

    _project(project, factor=3)
    failing, _ = invoke(project, ["plan", "dev", "--auto-apply", "--end", "2024-01-02"], engine)
    assert failing.exit_code == 2
    assert "1 of 1 unit test(s) of the changed models failed: the plan stops here" in failing.output
    assert "test_doubled (t.doubled): expected 2 row(s)" in failing.output
    with open_state_store(None, project) as state:
        assert state.get_environment("dev") is None  # nothing was written

    skipped, _ = invoke(project, ["plan", "dev", "--auto-apply", "--skip-tests", "--end", "2024-01-02"], engine)
    assert skipped.exit_code == 0, skipped.output
    assert [tuple(r) for r in engine.catalog.query_rows("SELECT n FROM t__dev.doubled")] == [(3,)]
