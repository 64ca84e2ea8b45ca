"""The change loop as a Dagster user lives it, in headless Chromium against ``dagster dev``.

A copy of the example (five days) in a git repository, its git sensor running and reloading the code location.
The sensor plans the first commit and backfills it; prod waits for approval, given by a click on the promotion
asset's "Materialize". Then a commit changes ``shop.daily_revenue``: the plan appears on the promotion asset's page
(the changed model, its category, its diff) while prod is unchanged; the approval click changes prod. Last, late
rows land in the external clickstream for one day, and a person materializes that partition of
``shop.daily_funnel`` from its page: prod's number for that day changes.

Timings (commit → plan visible, approval → prod changed) are printed for the closing note; screenshots land in
``$SPARKMESH_UI_SHOTS``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import dagster as dg
import pytest

sys.path.insert(0, str(Path(__file__).parent / "ui"))

from cdp import Browser, headless_browser  # noqa: E402
from dagster_dev import (  # noqa: E402
    DIALOG,
    LOCATION,
    choose_partitions,
    copy_example,
    free_port,
    open_instance,
    start_dagster_dev,
    stop_dagster_dev,
    wait_until,
)

from dagster_sparkmesh.dagster.sensor import Cursor  # noqa: E402

pytestmark = pytest.mark.e2e

RUN_TIMEOUT = 420.0
END = "2024-01-05"
PROMOTE_PAGE = "/assets/sparkmesh/promote_prod"
SENSOR = "sparkmesh_prod_git_sensor"


def _git(repo: Path, *args: str) -> str:
    user = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    return subprocess.run(["git", *user, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def _fetch(project: Path, sql: str) -> list[dict]:
    done = subprocess.run([str(Path(sys.executable).parent / "sparkmesh"), "-p", str(project), "fetchdf", "--json", sql],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _revenue(project: Path) -> list[dict]:
    return _fetch(project, "SELECT ds, revenue FROM shop.daily_revenue ORDER BY ds")


@pytest.fixture
def webserver_port() -> int:
    return free_port()


@pytest.fixture
def repo(tmp_path, webserver_port):
    from dagster_sparkmesh.engine.connect_server import stop_server

    project = copy_example(tmp_path / "shop", end=END)
    defs_yaml = project / "shop_dagster" / "defs" / "shop" / "defs.yaml"
    defs_yaml.write_text(defs_yaml.read_text() + (
        "  sensor:\n    default_status: running\n    minimum_interval_seconds: 5\n"
        f"    reload: {{location_name: {LOCATION}, port: {webserver_port}}}\n"
    ))
    (project / ".gitignore").write_text(".sparkmesh/\n__pycache__/\n")
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "first")
    yield project
    stop_server(project)


@pytest.fixture
def dagster_dev(repo, tmp_path, webserver_port):
    dev = start_dagster_dev(repo, tmp_path / "dagster_home", webserver_port)
    yield dev
    stop_dagster_dev(dev)


@pytest.fixture
def browser(tmp_path):
    with headless_browser(tmp_path) as opened:
        yield opened


_instance = open_instance


def _promotion_finished(instance: dg.DagsterInstance, after: float) -> float | None:
    """When the first successful promotion run launched after ``after`` (epoch seconds) ended."""
    since = datetime.fromtimestamp(after, tz=timezone.utc)
    records = instance.get_run_records(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.SUCCESS], created_after=since))
    ends = [r.end_time for r in records
            if r.end_time and dg.AssetKey.from_user_string(PROMOTE_PAGE.removeprefix("/assets/")) in (r.dagster_run.asset_selection or ())]
    return min(ends) if ends else None


def _cursor(instance: dg.DagsterInstance) -> Cursor:
    states = [s for s in instance.all_instigator_state() if s.name == SENSOR]
    return Cursor.parse(states[0].instigator_data.cursor if states and states[0].instigator_data else None)


def _wait(what: str, done, dev, timeout: float = RUN_TIMEOUT) -> None:
    wait_until(what, done, timeout, dev)


def _open_until(browser: Browser, page: str, expression: str, what: str) -> None:
    """Open ``page`` again every few seconds until ``expression`` holds: a person reloading the page (the asset page
    does not poll for new observations)."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while True:
        browser.open(page)
        try:
            browser.wait_for(expression, what, timeout=5)
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise


def _approve(browser: Browser, url: str) -> None:
    """A person's approval: "Materialize" on the promotion asset's page."""
    browser.open(f"{url}{PROMOTE_PAGE}")
    browser.click_button("Materialize")


def test_commit_plan_approve_and_restate_late_data_from_the_ui(browser, dagster_dev, repo, tmp_path):
    url = dagster_dev.url
    instance = _instance(tmp_path / "dagster_home")
    first = _git(repo, "rev-parse", "HEAD")

    _wait("the first commit backfilled, awaiting approval", lambda: _cursor(instance).phase == "awaiting_promotion", dagster_dev)
    _approve(browser, url)
    _wait("prod promoted", lambda: _cursor(instance).phase == "done", dagster_dev)
    browser.screenshot("1-first-commit-approved")
    before = _revenue(repo)

    model = repo / "models" / "shop" / "daily_revenue.sql"
    model.write_text(model.read_text().replace(
        "WHEN status <> 'returned' THEN amount", "WHEN status NOT IN ('returned', 'placed') THEN amount"))
    _git(repo, "commit", "-qam", "placed orders are not revenue yet")
    second = _git(repo, "rev-parse", "HEAD")
    committed = time.monotonic()

    # The promotion asset's Events tab opens on its latest event: the sensor's observation, the plan rendered.
    # Reloaded until the commit's plan shows (a run of the commit may show its hash first, and the Events tab does
    # not poll: under a loaded machine the page could wait on an old render).
    _open_until(browser, f"{url}{PROMOTE_PAGE}?view=events",
                f"document.body.innerText.includes('{second}') && document.body.innerText.includes('Directly modified')",
                "the new commit's plan")
    plan_visible = time.monotonic() - committed
    text = browser.text()
    assert "Directly modified shop.daily_revenue (breaking)" in text, text[-3000:]
    assert "+  SUM(CASE WHEN status NOT IN ('returned', 'placed') THEN amount ELSE 0 END) AS revenue," in text  # as written
    assert "Indirectly modified: shop.daily_funnel" in text
    browser.screenshot("2-plan-on-the-promotion-asset")
    assert _revenue(repo) == before  # nothing reaches prod before the approval

    _wait("the second commit backfilled", lambda: _cursor(instance) == Cursor(second, "awaiting_promotion", _cursor(instance).plan_id),
          dagster_dev)
    assert _revenue(repo) == before
    approved = time.time()
    _approve(browser, url)
    _wait("the approval's promotion run", lambda: _promotion_finished(instance, approved) is not None, dagster_dev)
    prod_changed = _promotion_finished(instance, approved) - approved  # its end: the views point at the new tables
    assert _revenue(repo) != before
    browser.screenshot("4-second-commit-approved")
    timings = f"UI timings: commit -> plan visible {plan_visible:.1f} s; approval -> prod changed {prod_changed:.1f} s"
    print(f"\n{timings}")
    (tmp_path / "ui-timings.txt").write_text(timings + "\n")  # for the record when pytest captures the print
    assert first != second

    # Late data: two page views land for 2024-01-03; a person materializes that partition of shop.daily_funnel.
    funnel = "SELECT page_views FROM shop.daily_funnel WHERE ds = DATE'2024-01-03'"
    views_before = _fetch(repo, funnel)[0]["page_views"]
    _fetch(repo, "INSERT INTO raw.web_events VALUES (9001, 10, 'page_view', TIMESTAMP'2024-01-03 10:00:00'), "
                 "(9002, 11, 'page_view', TIMESTAMP'2024-01-03 11:00:00')")
    browser.open(f"{url}/assets/shop/daily_funnel")
    browser.click_button("Materialize…")
    browser.wait_for(f"{DIALOG} !== null && {DIALOG}.innerText.includes('Launch')", "the launch dialog")
    choose_partitions(browser, "2024-01-03", "1 partition")
    browser.screenshot("5-late-data-dialog")
    browser.click(f"[...{DIALOG}.querySelectorAll('button')].filter(b => b.innerText.trim().startsWith('Launch')).pop()",
                  "the launch button")
    _wait("prod's 2024-01-03 funnel to count the late page views",
          lambda: _fetch(repo, funnel)[0]["page_views"] == views_before + 2, dagster_dev)
    browser.screenshot("6-late-data-restated")
