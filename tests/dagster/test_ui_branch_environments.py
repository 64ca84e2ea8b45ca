"""A branch environment as a Dagster user sees it, in headless Chromium against ``dagster dev``.

A copy of the example (five days) in a git repository, prod built from main, and the Component's ``branches``
block switched on. A branch changes ``shop.daily_revenue`` in a worktree of its own; the branch sensor adds the
branch's partition to ``sparkmesh/branch_environments`` and its run builds the environment. In the browser: the
branch among the asset's partitions, then the materialization's plan (the changed model, its category, its diff)
and its table diff against prod (the revenue column's statistics, the days whose revenue differs).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

sys.path.insert(0, str(Path(__file__).parent / "ui"))

from cdp import headless_browser  # noqa: E402
from dagster_dev import (  # noqa: E402
    copy_example,
    free_port,
    open_instance,
    start_dagster_dev,
    stop_dagster_dev,
    wait_until,
)

from dagster_sparkmesh.plan.branch_names import environment_for_branch  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUN_TIMEOUT = 420.0
BRANCH = "feature/placed-is-not-revenue"
ASSET_PAGE = "/assets/sparkmesh/branch_environments"


def _git(repo: Path, *args: str) -> str:
    user = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    return subprocess.run(["git", *user, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def _sparkmesh(project: Path, *args: str) -> None:
    done = subprocess.run([str(Path(sys.executable).parent / "sparkmesh"), "-p", str(project), *args],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture
def webserver_port() -> int:
    return free_port()


@pytest.fixture
def repo(tmp_path):
    from dagster_sparkmesh.engine.connect_server import stop_server

    project = copy_example(tmp_path / "shop", end="2024-01-05")
    defs_yaml = project / "shop_dagster" / "defs" / "shop" / "defs.yaml"
    defs_yaml.write_text(defs_yaml.read_text() + (
        "  branches:\n    prod_branch: main\n    default_status: running\n    minimum_interval_seconds: 5\n"
    ))
    (project / ".gitignore").write_text(".sparkmesh/\n__pycache__/\n")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "first")
    # Prod as main builds it, over the CSV clickstream the Component's csv_sources would create.
    _sparkmesh(project, "fetchdf", "CREATE DATABASE IF NOT EXISTS raw")
    _sparkmesh(project, "fetchdf", "CREATE TABLE IF NOT EXISTS raw.web_events (event_id BIGINT, customer_id INT, "
               f"event_type STRING, event_ts TIMESTAMP) USING csv OPTIONS (header 'true') LOCATION '{project / 'external_data'}'")
    _sparkmesh(project, "plan", "prod", "--auto-apply")
    yield project
    stop_server(project)


@pytest.fixture
def browser(tmp_path):
    with headless_browser(tmp_path) as opened:
        yield opened


_instance = open_instance


def _branch_run_done(instance: dg.DagsterInstance, commit: str) -> bool:
    runs = instance.get_runs(filters=dg.RunsFilter(tags={"sparkmesh/commit": commit}))
    failed = [r.run_id for r in runs if r.status == dg.DagsterRunStatus.FAILURE]
    assert not failed, f"the branch run failed: {failed}"
    return bool(runs) and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)


def _wait(what: str, done, dev, timeout: float = RUN_TIMEOUT) -> None:
    wait_until(what, done, timeout, dev)


def test_a_branch_environment_its_plan_and_its_table_diff_in_the_ui(browser, repo, tmp_path, webserver_port):
    worktree = tmp_path / "branch"
    _git(repo, "worktree", "add", "-q", "-b", BRANCH, str(worktree))
    model = worktree / "models" / "shop" / "daily_revenue.sql"
    model.write_text(model.read_text().replace(
        "WHEN status <> 'returned' THEN amount", "WHEN status NOT IN ('returned', 'placed') THEN amount"))
    _git(worktree, "commit", "-qam", "placed orders are not revenue yet")
    commit = _git(worktree, "rev-parse", "HEAD")
    environment = environment_for_branch(BRANCH)

    dev = start_dagster_dev(repo, tmp_path / "dagster_home", webserver_port)
    try:
        instance = _instance(tmp_path / "dagster_home")
        _wait("the branch's run", lambda: _branch_run_done(instance, commit), dev)

        browser.open(f"{dev.url}{ASSET_PAGE}?view=partitions")
        browser.wait_for(f"document.body.innerText.includes('{environment}')", "the branch's partition")
        browser.screenshot("branch-1-partitions")

        browser.open(f"{dev.url}{ASSET_PAGE}?view=events")
        # The Markdown entries render after the rest of the metadata: wait for the last one's words.
        browser.wait_for("document.body.innerText.includes('Rows joined on ds')", "the materialization's table diff")
        text = browser.text()
        assert environment in text and BRANCH in text and commit in text, text[-3000:]
        assert "Directly modified shop.daily_revenue (breaking)" in text, text[-3000:]
        assert "+  SUM(CASE WHEN status NOT IN ('returned', 'placed') THEN amount ELSE 0 END) AS revenue," in text
        assert "Changed columns" in text and "revenue" in text, text[-3000:]
        assert "Rows joined on ds" in text, text[-3000:]
        browser.screenshot("branch-2-plan")
        browser.evaluate("[...document.querySelectorAll('td')].filter(td => td.innerText.trim() === 'table_diff')"
                         ".pop().scrollIntoView({block: 'start'})")
        time.sleep(0.5)  # the scroll lands before the picture
        browser.screenshot("branch-3-table-diff")
    finally:
        stop_dagster_dev(dev)
