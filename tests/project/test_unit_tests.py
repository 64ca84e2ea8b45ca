from __future__ import annotations

import shutil
from datetime import date, datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.checks.unit_tests import load_unit_tests, validate_unit_tests
from dagster_sparkmesh.project.loader import load_project

FIXTURE = Path(__file__).parent / "fixtures" / "other_project"
MODELS = {"shop.item_scores", "raw.items", "raw.events"}


def _tests_file(tmp_path: Path, text: str) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.yaml").write_text(text)
    return tmp_path


def test_loads_rows_inputs_outputs_and_vars() -> None:
    first, second = load_unit_tests(FIXTURE)

    assert (first.name, first.model, first.line) == ("test_item_scores", "shop.item_scores", 1)
    assert first.inputs == (
        ("raw.items", ((("item_id", 1), ("price", 2.5)),)),
        ("raw.events", ((("event_id", 10), ("event_ts", datetime(2024, 1, 1, 10))),)),
    )
    assert first.expected_rows == ((("item_id", 1), ("score", 0.5), ("ds", date(2024, 1, 1))),)
    assert (first.start, first.end, first.execution_time) == ("2024-01-01", "2024-01-02", "2024-01-02T00:00:00")
    assert first.path == FIXTURE / "tests" / "test_items.yaml"

    assert second.inputs == (("raw.items", ((("item_id", 1), ("price", 2.5)), (("item_id", 2), ("price", None)))),)
    assert second.input_queries == (("raw.events", "SELECT 10 AS event_id"),)
    assert (second.expected_rows, second.expected_query) == ((), "SELECT 1 AS item_id")
    assert second.start is None


def test_validate_accepts_known_models() -> None:
    tests = load_unit_tests(FIXTURE)
    assert validate_unit_tests(tests, MODELS) == ()
    assert validate_unit_tests(tests, MODELS, parents={"shop.item_scores": {"raw.items", "raw.events"}}) == ()


def test_a_test_of_an_unknown_model_is_a_warning_at_its_line_and_is_left_out(tmp_path) -> None:
    # SQLMesh logs "Model '...' was not found" and skips the test; the project must load.
    tests = load_unit_tests(FIXTURE)
    warnings = validate_unit_tests(tests, {"shop.item_score", "raw.items", "raw.events"})
    assert warnings[0] == ("test_items.yaml:2: unit test test_item_scores is for unknown model shop.item_scores "
                           "(did you mean shop.item_score?): not run, as in SQLMesh")
    project = tmp_path / "p"
    shutil.copytree(FIXTURE, project)
    (project / "tests" / "test_items.yaml").write_text(
        (project / "tests" / "test_items.yaml").read_text().replace("model: shop.item_scores", "model: shop.gone", 1))
    loaded = load_project(project, use_cache=False)
    assert "shop.gone" not in {test.model for test in loaded.unit_tests}
    assert any("unknown model shop.gone" in warning for warning in loaded.warnings)


def test_an_input_no_model_declares_is_a_warning_at_its_line() -> None:
    # SQLMesh makes a fixture table of every input and runs the test: the project must load.
    tests = load_unit_tests(FIXTURE)
    warnings = validate_unit_tests(tests, {"shop.item_scores", "raw.items"})
    assert warnings == (
        "test_items.yaml:9: input raw.events of unit test test_item_scores is not a model of the project "
        "(did you mean raw.items?): unused, as in SQLMesh",
        "test_items.yaml:29: input raw.events of unit test test_from_csv_and_query is not a model of the project "
        "(did you mean raw.items?): unused, as in SQLMesh",
    )


def test_an_input_the_model_does_not_read_is_a_warning() -> None:
    tests = load_unit_tests(FIXTURE)
    warnings = validate_unit_tests(tests, MODELS, parents={"shop.item_scores": {"raw.items"}})
    assert warnings[0] == ("test_items.yaml:9: input raw.events of unit test test_item_scores is not read by "
                           "shop.item_scores (it reads: raw.items): unused, as in SQLMesh")
    assert len(warnings) == 2


def test_no_tests_folder(tmp_path: Path) -> None:
    assert load_unit_tests(tmp_path) == ()


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        ("t:\n  inputs: {}\n  outputs: {query: []}\n", "unit test t has no model", 1),
        ("t:\n  model: a.b\n", "unit test t has no outputs", 1),
        ("t:\n  model: a.b\n  output: {query: []}\n", "unknown key 'output'", 3),
        ("t:\n  model: a.b\n  outputs: {query: [1]}\n", "a row must be a mapping", 3),
        ("t:\n  model: a.b\n  outputs: {query: []}\n  vars:\n    stat: [1]\n", "variable 'stat' of vars must be", 5),
        ("t:\n  model: a.b\n  inputs:\n    a.c: {rws: []}\n  outputs: {query: []}\n", "unknown key 'rws'", 4),
        ("t:\n  model: a.b\n  outputs: {query: {query: 'SELECT 1; SELECT 2'}}\n", "exactly one query", 3),
        ("t:\n  model: a.b.c.d\n  outputs: {query: []}\n", "not of the form name, schema.name", 2),
        ("- t\n", "must map test names to tests", 1),
        ("t:\n  model: [a\n", "invalid YAML", 3),
    ],
)
def test_file_errors(tmp_path: Path, text: str, fragment: str, line: int) -> None:
    with pytest.raises(ProjectError) as error:
        load_unit_tests(_tests_file(tmp_path, text))
    assert fragment in str(error.value)
    assert error.value.line == line


def test_duplicate_test_names_across_files(tmp_path: Path) -> None:
    project = _tests_file(tmp_path, "t:\n  model: a.b\n  outputs: {query: []}\n")
    (project / "tests" / "test_b.yaml").write_text("\nt:\n  model: a.b\n  outputs: {query: []}\n")
    with pytest.raises(ProjectError) as error:
        load_unit_tests(project)
    assert (error.value.path.name, error.value.line) == ("test_b.yaml", 2)
