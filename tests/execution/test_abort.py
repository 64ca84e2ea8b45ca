"""Abort: Ctrl-C stops an apply between models / interval batches, keeps what completed, and a re-run resumes.

The end-to-end test runs ``sparkmesh plan --auto-apply`` in a child process (its own local Spark on its own
project folder, so its own Derby metastore) and sends it SIGINT once the first model's interval is recorded.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from dagster_sparkmesh.execution.abort import (
    ABORTED_EXIT_CODE,
    StopFlag,
    run_until_stopped,
)

SPARKMESH = str(Path(sys.executable).parent / "sparkmesh")

MODELS = {
    "events.sql": """
        MODEL (name abort_raw.events, kind FULL);

        SELECT d.ds, i.id, i.id * 10 AS amount
        FROM (SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-04', INTERVAL 1 DAY)) AS ds) AS d
        CROSS JOIN (SELECT explode(sequence(1, 3)) AS id) AS i
        """,
    "daily.sql": """
        MODEL (name abort_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 1));

        SELECT ds, SUM(amount) AS total FROM abort_raw.events WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds
        """,
    "summary.sql": """
        MODEL (name abort_shop.summary, kind FULL);

        SELECT SUM(total) AS grand_total, COUNT(*) AS days FROM abort_shop.daily
        """,
}
CONFIG = """\
model_defaults:
  dialect: spark
  start: '2024-01-01'
  cron: '@daily'
gateways:
  local:
    connection:
      config:
        spark.sql.shuffle.partitions: '2'
        spark.ui.enabled: 'false'
"""
APPLY = ("plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-04")


def test_first_interrupt_requests_a_stop_and_the_work_ends_cleanly():
    seen: list[bool] = []

    def work(stop: StopFlag) -> str:
        while not stop():
            time.sleep(0.01)
        seen.append(stop())
        return "stopped cleanly"

    def interrupt_soon() -> None:
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_soon).start()
    assert run_until_stopped(work) == "stopped cleanly"
    assert seen == [True]


def test_work_errors_reach_the_caller():
    def work(stop: StopFlag) -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_until_stopped(work)


def _project(folder: Path) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text(CONFIG)
    for file, text in MODELS.items():
        (folder / "models" / file).write_text(textwrap.dedent(text))
    return folder


def _recorded(project: Path) -> dict[str, int]:
    database = project / ".sparkmesh" / "state.db"
    if not database.exists():
        return {}
    try:
        with sqlite3.connect(database, timeout=5) as connection:
            return dict(connection.execute("SELECT name, COUNT(*) FROM intervals GROUP BY name").fetchall())
    except sqlite3.OperationalError:  # the child has not created the tables yet
        return {}


def _cli(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [SPARKMESH, "-p", str(project), *args], check=False, capture_output=True, text=True, env=env, timeout=240, cwd=project
    )


def _apply_and_interrupt(project: Path) -> tuple[int, str, str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    child = subprocess.Popen(
        [SPARKMESH, "-p", str(project), *APPLY],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=project,
    )
    try:
        deadline = time.monotonic() + 180
        while "abort_raw.events" not in _recorded(project):
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the first model never finished"
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=180)
    finally:
        if child.poll() is None:
            child.kill()
    return child.returncode, out, err


def test_ctrl_c_aborts_between_models_and_a_rerun_resumes(tmp_path: Path):
    from dagster_sparkmesh.state.store import open_state_store

    project = _project(tmp_path / "abort")
    code, out, err = _apply_and_interrupt(project)

    assert code == ABORTED_EXIT_CODE, out + err
    assert "aborted" in err and "run the same command to resume" in err
    recorded = _recorded(project)
    assert recorded["abort_raw.events"] == 4  # the completed model keeps its intervals
    assert recorded.get("abort_shop.daily", 0) < 4  # stopped between daily's one-day batches
    assert "abort_shop.summary" not in recorded
    store = open_state_store(None, project)
    try:
        assert store.get_environment("prod") is None  # nothing promoted
        [application] = store.list_plan_applications()
        assert application.outcome == "aborted"
        assert application.ended_at is not None
    finally:
        store.close()
    listed = _cli(project, "plans")
    assert listed.returncode == 0 and "aborted" in listed.stdout

    resumed = _cli(project, *APPLY)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "Applied plan" in resumed.stdout
    assert "abort_raw.events: up to date" in resumed.stdout  # resumed: the completed model is not recomputed
    assert _recorded(project) == {"abort_raw.events": 4, "abort_shop.daily": 4, "abort_shop.summary": 4}
    store = open_state_store(None, project)
    try:
        assert store.get_environment("prod") is not None
        assert [a.outcome for a in store.list_plan_applications()] == ["aborted", "succeeded"]
    finally:
        store.close()
