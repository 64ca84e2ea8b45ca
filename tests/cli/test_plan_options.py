"""``plan --select-model`` and ``--effective-from`` through click (undecided categories: test_uncategorized_prompts.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke

WINDOW = ["--start", "2024-01-01", "--end", "2024-01-03"]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return harness.write_tiny_project(tmp_path / "tiny")


def _edit_daily(project: Path, old: str, new: str) -> None:
    path = project / "models" / "daily.sql"
    path.write_text(path.read_text().replace(old, new))


def test_select_model_plans_only_the_selection(tiny):
    result, factory = invoke(tiny, ["plan", "--select-model", "raw.*", "--explain", *WINDOW])
    assert result.exit_code == 0, result.output
    assert "compute raw.events" in result.output
    assert "shop.daily" not in result.output
    assert factory.calls == 0


def test_unknown_selection_is_a_user_error(tiny):
    result, _ = invoke(tiny, ["plan", "--select-model", "nope.*", "--explain", *WINDOW])
    assert result.exit_code == 2 and "nope.*" in result.output


def test_effective_from_needs_forward_only_changes(tiny):
    result, factory = invoke(tiny, ["plan", "--effective-from", "2024-01-02", "--no-prompts", *WINDOW])
    assert result.exit_code == 2
    assert "forward-only" in result.output and "--effective-from 2024-01-02" in result.output
    assert factory.calls == 0


def test_forward_only_change_recomputes_from_the_effective_date(tiny, engine, clean_catalog):
    first, _ = invoke(tiny, ["plan", "--auto-apply", *WINDOW], engine)
    assert first.exit_code == 0, first.output
    _edit_daily(tiny, "SUM(amount) AS total", "SUM(amount) + 1 AS total")

    applied, _ = invoke(
        tiny, ["plan", "--forward-only", "--effective-from", "2024-01-02", "--auto-apply", *WINDOW], engine
    )

    assert applied.exit_code == 0, applied.output
    assert "Effective from" in applied.output and "2024-01-02" in applied.output
    rows = engine.catalog.query_rows("SELECT CAST(ds AS STRING), total FROM shop.daily ORDER BY ds")
    assert [tuple(r) for r in rows] == [("2024-01-01", 60), ("2024-01-02", 61), ("2024-01-03", 61)]


def test_execution_time_is_the_commands_now(tiny, engine, clean_catalog):
    planned, _ = invoke(tiny, ["plan", "--auto-apply", "--execution-time", "2024-01-03"], engine)
    assert planned.exit_code == 0, planned.output
    days = "SELECT CAST(ds AS STRING) FROM shop.daily ORDER BY ds"
    assert [r[0] for r in engine.catalog.query_rows(days)] == ["2024-01-01", "2024-01-02"]  # complete days before "now"

    ran, _ = invoke(tiny, ["run", "--execution-time", "2024-01-04 06:00"], engine)
    assert ran.exit_code == 0, ran.output
    assert [r[0] for r in engine.catalog.query_rows(days)] == ["2024-01-01", "2024-01-02", "2024-01-03"]

    again, _ = invoke(tiny, ["run", "--execution-time", "2024-01-04 07:00"], engine)
    assert again.exit_code == 0 and "up to date" in again.output

    wrong, _ = invoke(tiny, ["run", "--execution-time", "soon"], engine)
    assert wrong.exit_code == 2 and "--execution-time" in wrong.output


def test_an_end_after_the_execution_time_is_refused_as_in_sqlmesh(tiny, engine, clean_catalog):
    args = ["plan", "--auto-apply", "--no-prompts", "--execution-time", "2024-01-03 06:00"]
    refused, factory = invoke(tiny, [*args, "--start", "2024-01-01", "--end", "2024-01-04"], engine)
    assert refused.exit_code == 2, refused.output
    assert "--end" in refused.output and "after the execution time (2024-01-03 06:00:00 UTC)" in refused.output
    assert factory.calls == 0  # nothing planned, nothing written

    # A date is its midnight, as in SQLMesh: the execution's own day is allowed, and it is not computed (incomplete).
    allowed, _ = invoke(tiny, [*args, "--start", "2024-01-01", "--end", "2024-01-03"], engine)
    assert allowed.exit_code == 0, allowed.output
    days = "SELECT CAST(ds AS STRING) FROM shop.daily ORDER BY ds"
    assert [r[0] for r in engine.catalog.query_rows(days)] == ["2024-01-01", "2024-01-02"]


def test_a_relative_end_is_read_against_the_execution_time(tiny, engine, clean_catalog):
    args = ["plan", "--auto-apply", "--no-prompts", "--execution-time", "2024-01-04 06:00", "--start", "2024-01-01"]
    planned, _ = invoke(tiny, [*args, "--end", "1 day ago"], engine)  # 2024-01-03 06:00: days 1 and 2
    assert planned.exit_code == 0, planned.output
    days = "SELECT CAST(ds AS STRING) FROM shop.daily ORDER BY ds"
    assert [r[0] for r in engine.catalog.query_rows(days)] == ["2024-01-01", "2024-01-02"]
