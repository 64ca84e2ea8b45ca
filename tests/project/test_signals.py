"""Signals: @signal() functions in signals/, named by models, say which intervals are ready."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ExecutionError, ProjectError
from dagster_sparkmesh.model.records import SignalCall
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.signals import load_signals, parse_signal_text, ready_intervals, signal_calls
from dagster_sparkmesh.snapshot.records import Interval

FIXTURE = Path(__file__).parent / "fixtures" / "sqlmesh_python"
DAYS = [Interval(start=datetime(2024, 1, day), end=datetime(2024, 1, day + 1)) for day in (1, 2, 3)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE, tmp_path / "project"))


def _model(project: Path, *calls: SignalCall):
    return load_project(project, use_cache=False).models["smpy_raw.orders"].model_copy(update={"signals": calls})


def test_signals_gate_intervals(project: Path) -> None:
    signals = load_signals(project)
    model = _model(project, SignalCall(name="always"), SignalCall(name="not_after", args=(("day", '"2024-01-03"'),)))

    check = ready_intervals(model, DAYS, signals)

    assert check.ready == tuple(DAYS[:2])
    assert check.not_ready == ((DAYS[2], "not_after"),)
    assert not (project / "signals" / "__pycache__").exists()


def test_no_signal_means_every_interval_is_ready(project: Path) -> None:
    assert ready_intervals(_model(project), DAYS, {}).ready == tuple(DAYS)


def test_signal_spellings() -> None:
    where = {"path": Path("m.py"), "line": 3}
    assert signal_calls(["a", ("b", {"x": 1}), "c(y := 'z', n := 2.5)"], **where) == (
        SignalCall(name="a"), SignalCall(name="b", args=(("x", "1"),)),
        SignalCall(name="c", args=(("y", '"z"'), ("n", "2.5"))),
    )  # fmt: skip
    assert parse_signal_text("one_week_ago()", path=Path("m.sql")) == SignalCall(name="one_week_ago")


@pytest.mark.parametrize("value", ["a", [1], [("a", [1])], ["a(1)"]])
def test_wrong_signal_arguments_are_clear_errors(value: object) -> None:
    with pytest.raises(ProjectError) as error:
        signal_calls(value, path=Path("m.py"), line=3)
    assert error.value.line == 3 and error.value.hint


def test_an_unknown_signal_is_a_load_error(project: Path) -> None:
    model_file = project / "models" / "raw_orders.py"
    model_file.write_text(model_file.read_text().replace('"always"', '"alwyas"'))
    with pytest.raises(ProjectError, match="uses signal 'alwyas', which no @signal function defines"):
        load_project(project, use_cache=False)


def test_a_bad_answer_names_the_signal(project: Path, tmp_path: Path) -> None:
    model = _model(project, SignalCall(name="odd"))
    with pytest.raises(ExecutionError, match="signal 'odd' of model smpy_raw.orders returned 'yes'"):
        ready_intervals(model, DAYS, {"odd": lambda batch: "yes"})
    with pytest.raises(ExecutionError, match="raised ZeroDivisionError"):
        ready_intervals(model, DAYS, {"odd": lambda batch: 1 / 0})


def test_missing_intervals_of_a_project_are_checked_per_model(project: Path) -> None:
    from dagster_sparkmesh.project.signals import check_missing_intervals

    model_file = project / "models" / "raw_orders.py"
    model_file.write_text(model_file.read_text().replace('"2030-01-01"', '"2024-01-02"'))
    loaded = load_project(project, use_cache=False)
    checks = check_missing_intervals(project, loaded.models, {"smpy_raw.orders": DAYS, "smpy_raw.customers": DAYS[:1]})

    assert checks["smpy_raw.orders"].ready == (DAYS[0],)
    assert checks["smpy_raw.orders"].not_ready == ((DAYS[1], "not_after"), (DAYS[2], "not_after"))
    assert checks["smpy_raw.customers"].ready == (DAYS[0],) and not checks["smpy_raw.customers"].not_ready
