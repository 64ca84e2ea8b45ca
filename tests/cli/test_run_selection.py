"""``run --select-model``: only the selected models and their upstream models compute their missing intervals."""

from __future__ import annotations

import importlib.util
from datetime import datetime
from pathlib import Path

from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.state.store import open_state_store

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke

WINDOW = ["--start", "2024-01-01", "--end", "2024-01-03"]
JAN_1, JAN_2, JAN_4 = datetime(2024, 1, 1), datetime(2024, 1, 2), datetime(2024, 1, 4)


def _forget(project: Path, name: str, interval: Interval) -> None:
    """Make an interval due again, as a lost or newly due interval would be."""
    with open_state_store(None, project) as state:
        version = next(s.version for s in state.get_environment("prod").snapshots if s.name == name)
        state.remove_intervals(name, version, interval)


def _recorded(project: Path, name: str) -> list[Interval]:
    with open_state_store(None, project) as state:
        version = next(s.version for s in state.get_environment("prod").snapshots if s.name == name)
        return state.get_intervals(name, version)


def test_run_select_model_computes_the_selection_and_its_upstream_only(tmp_path, engine, clean_catalog):
    tiny = harness.write_tiny_project(tmp_path / "tiny")
    applied, _ = invoke(tiny, ["plan", "--auto-apply", *WINDOW], engine)
    assert applied.exit_code == 0, applied.output
    _forget(tiny, "shop.daily", Interval(start=JAN_2, end=JAN_4))

    upstream_only, factory = invoke(tiny, ["run", "--select-model", "raw*"], engine)
    assert upstream_only.exit_code == 0, upstream_only.output
    assert "Every interval of the selected models of `prod` is up to date" in upstream_only.output
    assert factory.calls == 0
    assert _recorded(tiny, "shop.daily") == [Interval(start=JAN_1, end=JAN_2)]

    typo, _ = invoke(tiny, ["run", "--select-model", "shop.dayly"], engine)
    assert typo.exit_code == 2 and "did you mean shop.daily" in typo.output

    _forget(tiny, "raw.events", Interval(start=JAN_1, end=JAN_4))
    daily_and_parent, _ = invoke(tiny, ["run", "--select-model", "shop.daily"], engine)
    assert daily_and_parent.exit_code == 0, daily_and_parent.output
    assert "raw.events: [2024-01-01, 2024-01-04)" in daily_and_parent.output
    assert "shop.daily: [2024-01-02, 2024-01-04) (2 intervals)" in daily_and_parent.output
    # The FULL parent's inputs did not change: its table is kept, and its three days are not counted as work.
    assert (
        "Ran 2 model(s): 2 interval(s) of 1 incremental model(s), 1 FULL table(s) kept, their query and inputs "
        "unchanged; 2 rows written in"
    ) in daily_and_parent.output
    assert _recorded(tiny, "shop.daily") == [Interval(start=JAN_1, end=JAN_4)]
    assert _recorded(tiny, "raw.events") == [Interval(start=JAN_1, end=JAN_4)]
    rows = engine.catalog.query_rows("SELECT CAST(ds AS STRING), total FROM shop.daily ORDER BY ds")
    assert [tuple(r) for r in rows] == [("2024-01-01", 60), ("2024-01-02", 60), ("2024-01-03", 60)]
