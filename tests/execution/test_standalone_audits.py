"""Standalone audits on Spark: a plan runs them after the backfill and before the promotion; a failing blocking one
stops the promotion, a non-blocking one warns; an unchanged audit is not run again, an edited one is."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.standalone_audits import StandaloneAuditFailure
from dagster_sparkmesh.plan.builder import build_plan
from tests.execution.conftest import PROJECTS
from tests.execution.test_apply import END, START

AUDIT_FILE = Path("audits") / "checks" / "daily_matches_events.sql"


@pytest.fixture
def project_dir(tmp_path, clean_catalog) -> Path:
    target = tmp_path / "audited"
    shutil.copytree(PROJECTS / "audited", target)
    return target


def plan_for(ctx, start, end):
    return build_plan(ctx.project, ctx.state, ctx.environment, start=start, end=end, execution_time=ctx.clock())


def _edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new))


def test_plan_runs_standalone_audits_once_and_again_after_an_edit(spark, project_dir, make_context):
    ctx = make_context(project_dir)
    plan = plan_for(ctx, START, END)
    assert plan.standalone_audits == ("big_totals", "daily_matches_events")

    result = apply_plan(ctx, plan)

    assert [(a.name, a.passed, a.blocking) for a in result.audits] == [
        ("big_totals", True, False), ("daily_matches_events", True, True)
    ]
    assert "`shop__daily__" in result.audits[1].query  # the physical table, not the view
    recorded = ctx.state.get_environment("prod").standalone_audits
    assert recorded == {name: audit.fingerprint for name, audit in ctx.project.standalone_audits.items()}
    assert plan_for(ctx, START, END).is_noop

    _edit(project_dir / AUDIT_FILE, "d.total <> e.total", "d.total < e.total")
    ctx = make_context(project_dir)
    again = plan_for(ctx, START, END)
    assert (again.standalone_audits, again.changed_audits) == (("daily_matches_events",), ("daily_matches_events",))
    assert not again.directly_modified and not again.missing_intervals  # no model changed
    assert [a.name for a in apply_plan(ctx, again).audits] == ["daily_matches_events"]


def test_a_failing_blocking_audit_stops_the_promotion_after_the_backfill(spark, project_dir, make_context):
    _edit(project_dir / AUDIT_FILE, "d.total <> e.total", "d.total = e.total")
    ctx = make_context(project_dir)
    plan = plan_for(ctx, START, END)

    with pytest.raises(StandaloneAuditFailure) as raised:
        apply_plan(ctx, plan)

    error = raised.value
    assert "daily_matches_events (5 offending row(s))" in str(error)
    assert (error.path, error.line) == (project_dir / AUDIT_FILE, 2)
    assert [(r.name, r.failing_rows) for r in error.results] == [("big_totals", 0), ("daily_matches_events", 5)]
    recorded = ctx.state.get_intervals("shop.daily", plan.version_of("shop.daily"))
    assert (recorded[0].start, recorded[-1].end) == (START, END)  # the backfill ran, then the audits
    assert ctx.state.get_environment("prod") is None
    assert not spark.catalog.databaseExists("shop")  # no view
    assert ctx.state.list_plan_applications()[-1].outcome == "failed"


def test_a_failing_non_blocking_audit_only_warns(spark, project_dir, make_context):
    _edit(project_dir / "audits" / "big_totals.sql", "total > 1000", "total > 10")
    ctx = make_context(project_dir)

    result = apply_plan(ctx, plan_for(ctx, START, END))

    warned = {a.name: a for a in result.audits}["big_totals"]
    assert (warned.passed, warned.blocking, warned.failing_rows, len(warned.sample)) == (False, False, 5, 5)
    assert ctx.state.get_environment("prod") is not None


def test_a_run_audits_again_when_the_models_it_reads_get_data(spark, project_dir, make_context):
    ctx = make_context(project_dir)
    apply_plan(ctx, plan_for(ctx, START, END))

    ctx.clock = lambda: datetime(2024, 1, 8)  # two days later: two new days to compute (none is computed early)
    later = plan_for(ctx, START, datetime(2024, 1, 8))

    assert later.changed_audits == () and "shop.daily" in later.missing_intervals
    assert later.standalone_audits == ("big_totals", "daily_matches_events")
    ran = apply_plan(ctx, later, promote_after=False)  # as `sparkmesh run` does: no promotion
    assert [(a.name, a.passed) for a in ran.audits] == [("big_totals", True), ("daily_matches_events", True)]


def test_an_audit_runs_only_for_new_data_of_the_models_it_reads(project_dir, make_context):
    from dagster_sparkmesh.plan.standalone_audits import with_standalone_audits

    ctx = make_context(project_dir)
    plan = plan_for(ctx, START, END)
    # As `sparkmesh run --select-model raw.events` narrows it: big_totals reads only shop.daily.
    narrowed = plan.model_copy(update={"missing_intervals": {"raw.events": plan.missing_intervals["raw.events"]},
                                       "changed_audits": ()})
    recorded = plan.environment_after.model_copy(
        update={"standalone_audits": {n: a.fingerprint for n, a in ctx.project.standalone_audits.items()}}
    )
    assert with_standalone_audits(narrowed, ctx.project, recorded).standalone_audits == ("daily_matches_events",)


def test_a_stored_plan_is_stale_once_an_audit_changed(project_dir, make_context):
    from dagster_sparkmesh.plan.stored import changed_since

    plan = plan_for(make_context(project_dir), START, END)
    _edit(project_dir / AUDIT_FILE, "d.total <> e.total", "d.total < e.total")

    assert changed_since(plan, make_context(project_dir).project) == ["audit daily_matches_events"]
