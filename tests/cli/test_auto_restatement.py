"""``auto_restatement_cron``: a run of prod restates a model's latest intervals once its cron ticked, so late rows of
those days reach the table (and its readers), as SQLMesh's ``run`` does; between ticks, and in other environments, a
run computes only what is missing. Checked against SQLMesh 0.236.4 with the same files and execution times
(DuckDB): the same days were recomputed at the same runs."""

from __future__ import annotations

import importlib.util
import textwrap
from datetime import datetime
from pathlib import Path

from dagster_sparkmesh.state.store import open_state_store

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke

DAILY = """
MODEL (
  name shop.daily,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds, auto_restatement_cron '@weekly', auto_restatement_intervals 3),
);
SELECT ds, SUM(amount) AS total FROM late_src.events WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds
"""
COPY = """
MODEL (name shop.daily_copy, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));
SELECT ds, total FROM shop.daily WHERE ds BETWEEN @start_ds AND @end_ds
"""


def _project(folder: Path, daily: str = DAILY) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  cron: '@daily'\n")
    (folder / "models" / "daily.sql").write_text(textwrap.dedent(daily))
    (folder / "models" / "daily_copy.sql").write_text(textwrap.dedent(COPY))
    return folder


def _add_rows(engine, *days: int) -> None:
    values = ", ".join(f"(DATE'2024-01-{day:02d}', 1)" for day in days)
    engine.catalog.execute(f"INSERT INTO late_src.events VALUES {values}")


def _totals(engine, table: str) -> dict[int, int]:
    rows = engine.catalog.query_rows(f"SELECT DAY(ds), total FROM {table} ORDER BY ds")
    return {int(day): int(total) for day, total in rows}


def _run(project: Path, engine, at: str):
    result, _ = invoke(project, ["run", "--execution-time", at], engine)
    assert result.exit_code == 0, result.output
    return result.output


def test_late_rows_of_the_latest_intervals_arrive_at_each_tick_and_readers_follow(tmp_path, engine, clean_catalog):
    engine.catalog.execute("CREATE SCHEMA IF NOT EXISTS late_src")
    engine.catalog.execute("CREATE TABLE late_src.events (ds DATE, amount INT) USING parquet")
    _add_rows(engine, *range(1, 11))
    project = _project(tmp_path / "p")
    applied, _ = invoke(project, ["plan", "--auto-apply", "--execution-time", "2024-01-05"], engine)  # a Friday
    assert applied.exit_code == 0, applied.output
    _add_rows(engine, 2, 4, 5)  # late rows of days already computed

    before_tick = _run(project, engine, "2024-01-06T12:00:00")  # no Sunday since prod was planned
    assert "restated on its auto_restatement_cron" not in before_tick
    assert _totals(engine, "shop.daily") == {1: 1, 2: 1, 3: 1, 4: 1, 5: 2}

    at_tick = _run(project, engine, "2024-01-07T00:00:00")  # the @weekly tick: the three days before it
    assert "shop.daily: restated on its auto_restatement_cron, 2024-01-04 00:00 to 2024-01-07 00:00" in at_tick
    expected = {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 1}  # day 2's late row is older than the three latest days
    assert _totals(engine, "shop.daily") == expected
    assert _totals(engine, "shop.daily_copy") == expected  # the reader was restated over the same days

    _add_rows(engine, 6)
    same_week = _run(project, engine, "2024-01-07T12:00:00")  # no tick since the last run looked
    assert "restated" not in same_week and _totals(engine, "shop.daily")[6] == 1

    next_week = _run(project, engine, "2024-01-14T00:00:00")
    assert "shop.daily: restated on its auto_restatement_cron, 2024-01-11 00:00 to 2024-01-14 00:00" in next_week
    # Day 6's late row came after its tick's three days: it waits for a restatement that reaches it.
    assert _totals(engine, "shop.daily") == {**expected, **{day: 1 for day in range(7, 11)}}


def test_a_model_without_a_count_is_restated_whole_and_the_look_is_recorded(tmp_path, engine, clean_catalog):
    engine.catalog.execute("CREATE SCHEMA IF NOT EXISTS late_src")
    engine.catalog.execute("CREATE TABLE late_src.events (ds DATE, amount INT) USING parquet")
    _add_rows(engine, 1, 2, 3)
    whole = DAILY.replace(", auto_restatement_intervals 3", "")
    project = _project(tmp_path / "p", whole)
    applied, _ = invoke(project, ["plan", "--auto-apply", "--execution-time", "2024-01-04"], engine)
    assert applied.exit_code == 0, applied.output
    _add_rows(engine, 1)
    output = _run(project, engine, "2024-01-07T00:00:00")
    assert "shop.daily: restated on its auto_restatement_cron, 2024-01-01 00:00 to 2024-01-04 00:00" in output
    assert _totals(engine, "shop.daily") == {1: 2, 2: 1, 3: 1}
    with open_state_store(None, project) as state:
        version = next(s.version for s in state.get_environment("prod").snapshots if s.name == "shop.daily")
        assert state.restatement_looks([("shop.daily", version)]) == {("shop.daily", version): datetime(2024, 1, 7)}


def test_a_run_that_fails_after_restating_leaves_the_days_missing_for_the_next_run(tmp_path, engine, clean_catalog):
    # The look is recorded once the restated intervals were removed (as SQLMesh records its next restatement time):
    # the next run computes them without restating again.
    engine.catalog.execute("CREATE SCHEMA IF NOT EXISTS late_src")
    engine.catalog.execute("CREATE TABLE late_src.events (ds DATE, amount INT) USING parquet")
    _add_rows(engine, *range(1, 7))
    checked = DAILY.replace("SUM(amount) AS total", "SUM(amount) AS total, ASSERT_TRUE(MAX(amount) < 100) AS checked")
    project = _project(tmp_path / "p", checked)
    applied, _ = invoke(project, ["plan", "--auto-apply", "--execution-time", "2024-01-05"], engine)
    assert applied.exit_code == 0, applied.output
    engine.catalog.execute("INSERT INTO late_src.events VALUES (DATE'2024-01-04', 1), (DATE'2024-01-05', 1000)")
    failed, _ = invoke(project, ["run", "--execution-time", "2024-01-07T00:00:00"], engine)
    assert failed.exit_code != 0 and "restated on its auto_restatement_cron" in failed.output
    engine.catalog.execute("DROP TABLE late_src.events")  # the bad row is corrected at its source
    engine.catalog.execute("CREATE TABLE late_src.events (ds DATE, amount INT) USING parquet")
    _add_rows(engine, *range(1, 7), 4, 5)
    after = _run(project, engine, "2024-01-07T06:00:00")
    assert "restated on its auto_restatement_cron" not in after
    assert _totals(engine, "shop.daily") == {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 1}
