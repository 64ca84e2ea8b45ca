"""The example project in Dagster's UI, driven by a person's clicks in headless Chromium.

``dagster dev`` serves a private copy of the example (managed Spark Connect server, SQLite state, its own
Dagster instance). In the browser: the asset graph shows the project's groups; "Materialize all" on the `raw`
and `staging` groups runs the seeds and views (staging.web_events reads the external CSV table, which the
example's resource registers on first use); then a backfill of three days of `shop.fct_orders` is launched from
the asset's dialog, and the asset's Partitions tab shows them materialized; then "Materialize all" over every
partition (the copy's incremental models end on 2024-01-30) is one backfill that ends with the promotion, and the
asset page shows partition row counts and a passing freshness policy. The state store must agree.

Screenshots of each step land in ``$SPARKMESH_UI_SHOTS`` (default: a folder under /tmp), never in the repo.
"""

from __future__ import annotations

import os
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "ui"))

from cdp import Browser, BrowserError, by_text, chromium_or_skip
from dagster_dev import (
    DIALOG,
    LOCATION,
    choose_partitions,
    copy_example,
    free_port,
    start_dagster_dev,
    stop_dagster_dev,
)

pytestmark = pytest.mark.e2e

RUN_TIMEOUT = 300.0  # one run on a busy 2-core machine, Spark Connect server start included


@pytest.fixture
def shots() -> Path:
    folder = os.environ.get("SPARKMESH_UI_SHOTS") or tempfile.mkdtemp(prefix="sparkmesh-ui-shots-")
    return Path(folder)


@pytest.fixture
def example(tmp_path, request):
    """A copy of the example project whose Spark Connect server is always stopped afterwards; a test may give
    the last day of its incremental models (``indirect`` parameter) to have a few partitions only."""
    from dagster_sparkmesh.engine.connect_server import stop_server

    project = copy_example(tmp_path / "shop", end=getattr(request, "param", None))
    yield project
    stop_server(project)


@pytest.fixture
def dagster_dev(example, tmp_path):
    dev = start_dagster_dev(example, tmp_path / "dagster_home", free_port())
    yield dev
    stop_dagster_dev(dev)


@pytest.fixture
def browser(tmp_path, shots):
    chromium = chromium_or_skip()
    browser = Browser(chromium, tmp_path / "chromium-profile", shots)
    yield browser
    browser.close()


@pytest.mark.parametrize("example", ["2024-01-30"], indirect=True)  # 30 daily partitions, not every day since 2024
def test_materialize_backfill_and_promote_from_the_ui(browser, dagster_dev, example):
    url = dagster_dev.url

    browser.open(f"{url}/asset-groups")
    browser.wait_for("document.body.innerText.includes('Materialize all (16)')", "the global asset graph")
    lines = {line.strip() for line in browser.text().splitlines()}
    assert {"raw", "shop", "staging", "sparkmesh"} <= lines, "the project's groups are not in the graph"
    browser.screenshot("1-asset-graph")

    _materialize_group(browser, url, "raw", 3, step=2)
    _materialize_group(browser, url, "staging", 4, step=3)

    browser.open(f"{url}/assets/shop/fct_orders")
    browser.click_button("Materialize…")
    # With more than 90 days the dialog offers the last 90 until "Show all partitions" is handled: a range typed
    # before that is "not found". (This copy has 30 days: every partition is offered at once.)
    show_all = by_text("a", "Show all partitions") + " || " + by_text("button", "Show all partitions")
    browser.wait_for(f"{DIALOG} !== null && {DIALOG}.innerText.includes('Launch backfill')", "the launch dialog")
    browser.evaluate(f"(() => {{ const link = {show_all}; if (link) link.click(); }})()")
    browser.wait_for(f"!{DIALOG}.innerText.includes('Show all partitions')", "every partition offered")
    choose_partitions(browser, "[2024-01-01...2024-01-03]", "3 partitions")
    browser.screenshot("4-backfill-dialog")
    browser.click_button("Launch backfill")

    browser.open(f"{url}/assets/shop/fct_orders?view=partitions")
    browser.wait_for(
        "document.body.innerText.includes('Materialized (3)')", "three materialized partitions", timeout=RUN_TIMEOUT
    )
    assert "Failed (0)" in browser.text()
    browser.screenshot("5-partitions-filled")

    assert _intervals(example, "shop.fct_orders") == [(datetime(2024, 1, 1), datetime(2024, 1, 4))]

    # README's first UI step: "Materialize all" over every partition is one backfill; each daily group runs as ONE
    # run of its 30 days; the promotion follows; the asset page shows row counts and freshness.
    browser.open(f"{url}/asset-groups")
    browser.wait_for("document.body.innerText.includes('Materialize all (16)')", "the global asset graph")
    browser.click_button("Materialize all", prefix=True)
    browser.wait_for(f"{DIALOG} && {DIALOG}.innerText.includes('Launch backfill')", "the launch dialog")
    _select_all_partitions(browser)
    browser.screenshot("6-materialize-all-dialog")
    browser.click_button("Launch backfill")

    # The promotion follows the backfill, which includes it (prod's promotion has no automation condition: it
    # waits for a person, and "Materialize all" is one); the state store says when.
    browser.wait_until(lambda: _promoted_plan(example), "the promotion of prod", timeout=3 * RUN_TIMEOUT)
    assert _intervals(example, "shop.fct_orders") == [(datetime(2024, 1, 1), datetime(2024, 1, 31))]
    browser.open(f"{url}/assets/sparkmesh/promote_prod")
    browser.wait_for("document.body.innerText.includes('views_changed')", "the promotion's materialization")
    browser.screenshot("7-promoted")

    browser.open(f"{url}/assets/shop/fct_orders")
    browser.wait_for("document.body.innerText.includes('dagster/partition_row_count')", "the rows of shop.fct_orders")
    # The policy from the model's cron, evaluated by Dagster's freshness daemon (`freshness: enabled` in dagster.yaml).
    browser.wait_for("document.body.innerText.includes('Freshness policy\\nPassing')", "a passing freshness policy",
                     timeout=RUN_TIMEOUT)
    browser.screenshot("8-asset-page")


def _promoted_plan(project: Path) -> str | None:
    from dagster_sparkmesh.state.store import open_state_store

    with open_state_store(None, project) as state:
        environment = state.get_environment("prod")
        return environment.plan_id if environment else None


def test_asset_pages_show_a_derived_column_schema_and_the_python_source(browser, dagster_dev):
    """Definitions only (no run, no Spark): what a reader sees about a model before materializing anything."""
    url = dagster_dev.url
    browser.open(f"{url}/assets/shop/customers")
    # shop.customers declares no columns: Dagster shows the ones derived from its query, typed, described.
    browser.wait_for("document.body.innerText.includes('DECIMAL(12, 2)')", "the derived columns of shop.customers")
    # The descriptions are rendered (as Markdown) after the column table itself: wait for them, not just the types.
    browser.wait_for(
        "document.body.innerText.includes('sum of the amounts of order lines not returned')",
        "the column description of shop.customers.lifetime_revenue",
    )
    text = browser.text()
    assert "LEFT JOIN lifetime AS l" in text, "the SQL is not shown as written"
    browser.screenshot("0-sql-model-columns")

    browser.open(f"{url}/assets/shop/customer_segments")
    browser.wait_for("document.body.innerText.includes('Marketing segment per customer')", "the Python model's page")
    # The source is rendered (as Markdown) after the page's first lines: wait for it, as for the descriptions above
    # (a read right after the first line found it missing once, on a busy machine).
    browser.wait_for("document.body.innerText.includes('def execute(context')", "the Python model's source")
    assert "Module(" not in browser.text(), "the Python model's description is an AST dump"
    browser.screenshot("0-python-model-description")


def _materialize_group(browser: Browser, url: str, group: str, count: int, step: int) -> None:
    """Click "Materialize all" on a group's graph and wait until every node says it was materialized."""
    browser.open(f"{url}/locations/__repository__@{LOCATION}/asset-groups/{group}")
    browser.click_button("Materialize all", prefix=True)
    browser.wait_for("document.body.innerText.includes('Launched run')", f"the {group} run to launch")

    def all_materialized() -> bool:
        lines = [line.strip() for line in browser.text().splitlines()]
        if "Failed" in lines:
            pytest.fail(f"a {group} asset failed to materialize; see {browser.screenshot(f'{step}-{group}-failed')}")
        return lines.count("Materialized") >= count

    browser.wait_until(all_materialized, f"{count} materialized {group} assets", timeout=RUN_TIMEOUT)
    browser.screenshot(f"{step}-{group}-materialized")


def _intervals(project: Path, name: str) -> list[tuple[datetime, datetime]]:
    from dagster_sparkmesh.state.store import open_state_store

    with open_state_store(None, project) as state:
        return [
            (interval.start, interval.end)
            for snapshot in state.get_snapshots_by_name([name])
            for interval in state.get_intervals(name, snapshot.version)
        ]


def _select_all_partitions(browser: Browser, attempts: int = 6) -> None:
    """Click the launch dialog's "All" partitions button until the dialog says 30 partitions. A click that lands
    while the dialog is still loading its partitions, or while its partition section is folded, selects nothing
    (seen once on a loaded machine: the section folded, "0 partitions"), so the section is opened and the click
    repeated, each given ten seconds."""
    selected = f"{DIALOG}.innerText.includes('30 partitions')"
    all_button = f"[...{DIALOG}.querySelectorAll('button')].filter(e => e.innerText.trim() === 'All').pop()"
    for attempt in range(1, attempts + 1):
        if not browser.evaluate(f"!!({all_button})"):
            browser.click(f"[...{DIALOG}.querySelectorAll('*')].filter(e => e.innerText && "
                          "e.innerText.trim().startsWith('Partition selection')).pop()", "the partition section")
        browser.click(all_button, "all partitions")
        try:
            browser.wait_for(selected, "the 30 days selected", timeout=10 if attempt < attempts else 60)
            return
        except BrowserError:
            if attempt == attempts:
                raise
