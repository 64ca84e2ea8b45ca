"""``sparkmesh plan`` shows the standalone audits it runs, reports their results, and a blocking failure exits 2."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from dagster_sparkmesh.state.store import open_state_store

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)

AUDITED = Path(__file__).parents[1] / "execution" / "projects" / "audited"
WINDOW = ["--start", "2024-01-01", "--end", "2024-01-03"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    target = tmp_path / "audited"
    shutil.copytree(AUDITED, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    return target


def test_plan_lists_the_audits_it_runs_and_explains_where(project):
    result, factory = harness.invoke(project, ["plan", "--explain", *WINDOW])

    assert result.exit_code == 0, result.output
    assert "Standalone audits" in result.output
    assert "daily_matches_events (new or changed)" in result.output
    assert "run standalone audit daily_matches_events" in result.output
    assert factory.calls == 0


def test_apply_reports_results_and_a_blocking_failure_exits_2(spark, engine, project, clean_catalog):
    big = project / "audits" / "big_totals.sql"
    big.write_text(big.read_text().replace("total > 1000", "total > 10"))
    applied, _ = harness.invoke(project, ["plan", "--auto-apply", *WINDOW], engine)
    assert applied.exit_code == 0, applied.output
    assert "daily_matches_events: ok" in applied.output
    assert "big_totals: 3 offending rows (non-blocking: a warning)" in applied.output

    audit = project / "audits" / "checks" / "daily_matches_events.sql"
    audit.write_text(audit.read_text().replace("d.total <> e.total", "d.total = e.total"))
    failed, _ = harness.invoke(project, ["plan", "--auto-apply", *WINDOW], engine)

    assert failed.exit_code == 2, failed.output
    assert "blocking standalone audit failed: daily_matches_events (3 offending row(s))" in failed.output
    assert "daily_matches_events.sql:2" in failed.output
    with open_state_store(None, project) as state:
        # The environment still holds the fingerprint the audit passed with: the next plan runs it again.
        assert "daily_matches_events" in state.get_environment("prod").standalone_audits


def test_info_lists_the_standalone_audits(project):
    listed, _ = harness.invoke(project, ["info"])
    as_json, _ = harness.invoke(project, ["info", "--json"])

    assert "2 standalone audits: big_totals, daily_matches_events" in listed.output
    audits = json.loads(as_json.output)["standalone_audits"]
    assert audits["daily_matches_events"]["depends_on"] == ["raw.events", "shop.daily"]
    assert (audits["big_totals"]["blocking"], audits["big_totals"]["skip"]) == (False, False)
