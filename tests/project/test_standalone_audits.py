"""Standalone audits load with what they read, get a fingerprint of their own, render to physical tables, and
an unknown model is a clear error. No Spark."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.standalone_audit import StandaloneAudit
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.checks.standalone_audits import render_standalone_audit
from dagster_sparkmesh.snapshot.fingerprint import standalone_audit_fingerprint

AUDITED = Path(__file__).parents[1] / "execution" / "projects" / "audited"
AUDIT_FILE = Path("audits") / "checks" / "daily_matches_events.sql"


@pytest.fixture
def project_dir(tmp_path) -> Path:
    target = tmp_path / "audited"
    shutil.copytree(AUDITED, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    return target


def test_a_standalone_audit_in_a_nested_folder_loads_with_the_models_it_reads(project_dir):
    project = load_project(project_dir, use_cache=False)

    audit = project.standalone_audits["daily_matches_events"]
    assert audit.depends_on == {"shop.daily", "raw.events"}
    assert (audit.blocking, audit.skip, audit.line) == (True, False, 2)
    assert audit.description == "every daily total is the sum of its events"
    assert audit.path == project_dir / AUDIT_FILE
    assert project.standalone_audits["big_totals"].blocking is False
    assert "daily_matches_events" not in project.audits  # not attachable to a model
    assert len(audit.fingerprint) == 64


def test_editing_the_audit_changes_its_fingerprint_only_and_a_read_model_change_moves_it(project_dir):
    before = load_project(project_dir, use_cache=False)
    audit_file = project_dir / AUDIT_FILE
    audit_file.write_text(audit_file.read_text().replace("d.total <> e.total", "d.total < e.total"))
    edited = load_project(project_dir, use_cache=False)

    name = "daily_matches_events"
    assert edited.standalone_audits[name].fingerprint != before.standalone_audits[name].fingerprint
    assert {n: m.fingerprint for n, m in edited.models.items()} == {n: m.fingerprint for n, m in before.models.items()}
    assert edited.standalone_audits["big_totals"].fingerprint == before.standalone_audits["big_totals"].fingerprint

    # Formatting and comments are not a change; a model it reads changing is.
    audit_file.write_text(audit_file.read_text().replace("SELECT d.ds", "-- note\nselect   d.ds"))
    assert load_project(project_dir, use_cache=False).standalone_audits == edited.standalone_audits
    daily = project_dir / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("COUNT(*) AS orders", "COUNT(*) + 0 AS orders"))
    changed_parent = load_project(project_dir, use_cache=False)
    assert changed_parent.standalone_audits["big_totals"].fingerprint != before.standalone_audits["big_totals"].fingerprint


def test_an_audit_reading_an_unknown_model_names_the_file_and_line(project_dir):
    audit_file = project_dir / AUDIT_FILE
    audit_file.write_text(audit_file.read_text().replace("FROM shop.daily AS d", "FROM shop.dayly AS d"))

    with pytest.raises(ProjectError) as raised:
        load_project(project_dir, use_cache=False)

    error = raised.value
    assert (error.path, error.line) == (audit_file, 8)
    assert "shop.dayly" in error.message and "daily_matches_events" in error.message
    assert "did you mean shop.daily" in error.hint
    assert "FROM shop.dayly AS d" in error.snippet


def test_bad_headers_are_errors_at_their_line(project_dir):
    (project_dir / "audits" / "more.sql").write_text(
        "AUDIT (name needs_no_defaults, standalone true, defaults (x = 1));\nSELECT * FROM shop.daily\n"
    )
    with pytest.raises(ProjectError, match="takes no defaults"):
        load_project(project_dir, use_cache=False)
    (project_dir / "audits" / "more.sql").write_text("AUDIT (name same, standalone true);\nSELECT 1 AS x\n")
    with pytest.raises(ProjectError, match="reads no model") as raised:
        load_project(project_dir, use_cache=False)
    assert raised.value.line == 2


def test_standalone_belongs_in_audits_and_skip_only_to_standalone_audits(project_dir):
    daily = project_dir / "models" / "daily.sql"
    original = daily.read_text()
    daily.write_text(original + ";\n\nAUDIT (name inline, standalone true);\nSELECT * FROM shop.daily WHERE total < 0\n")
    with pytest.raises(ProjectError, match="move it to a file under audits/"):
        load_project(project_dir, use_cache=False)
    daily.write_text(original)
    (project_dir / "audits" / "attached.sql").write_text("AUDIT (name attached, skip true);\nSELECT * FROM @this_model\n")
    with pytest.raises(ProjectError, match="skip applies to standalone audits only") as raised:
        load_project(project_dir, use_cache=False)
    assert raised.value.line == 1


def test_rendering_reads_the_physical_tables_and_the_window(project_dir):
    project = load_project(project_dir, use_cache=False)
    tables = {"shop.daily": "sqlmesh__shop.shop__daily__1", "raw.events": "sqlmesh__raw.raw__events__2"}

    sql = render_standalone_audit(
        project.standalone_audits["daily_matches_events"],
        start=datetime(2024, 1, 1),
        end=datetime(2024, 1, 3),
        execution_time=datetime(2024, 1, 3),
        table_for=tables,
        models=project.models,
    )

    assert sql == (
        "SELECT d.ds, d.total, e.total AS events_total FROM `sqlmesh__shop`.`shop__daily__1` AS d "
        "JOIN (SELECT ds, SUM(amount) AS total FROM `sqlmesh__raw`.`raw__events__2` AS events "
        "WHERE ds BETWEEN '2024-01-01' AND '2024-01-02' GROUP BY ds) AS e ON d.ds = e.ds WHERE d.total <> e.total"
    )


def test_fingerprint_is_pinned():
    audit = StandaloneAudit(name="a", query="SELECT * FROM s.t WHERE x < 0", depends_on=frozenset({"s.t"}), path=Path("a.sql"))
    assert standalone_audit_fingerprint(audit, {"s.t": "f" * 64}) == (
        "c85a4c8e4b1900709aaa94a71f0dca8845f48a69d570490d6a2cf69492f492a5"
    )
