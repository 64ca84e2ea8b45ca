"""AUDIT_ONLY models on Spark: a plan runs them as standalone audits after the backfill; a failing blocking one stops
the promotion, a non-blocking one warns with at most ``max_failing_rows`` rows shown; neither has a table or view."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.standalone_audits import StandaloneAuditFailure
from dagster_sparkmesh.plan.builder import build_plan
from tests.execution.conftest import PROJECTS
from tests.execution.test_apply import END, START


@pytest.fixture
def project_dir(tmp_path, clean_catalog) -> Path:
    target = tmp_path / "audit_only"
    shutil.copytree(PROJECTS / "audit_only", target)
    return target


def plan_for(ctx):
    return build_plan(ctx.project, ctx.state, ctx.environment, start=START, end=END, execution_time=ctx.clock())


def _edit(path: Path, old: str, new: str) -> None:
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))


def test_a_plan_runs_audit_only_models_and_a_non_blocking_failure_only_warns(spark, project_dir, make_context):
    _edit(project_dir / "models" / "checks" / "large_orders.sql", "amount > 100", "amount > 5")
    ctx = make_context(project_dir)
    plan = plan_for(ctx)
    assert plan.standalone_audits == ("checks.large_orders", "checks.orders_have_customers")

    result = apply_plan(ctx, plan)

    by_name = {audit.name: audit for audit in result.audits}
    assert (by_name["checks.orders_have_customers"].passed, by_name["checks.orders_have_customers"].blocking) == (True, True)
    large = by_name["checks.large_orders"]
    assert (large.passed, large.blocking, large.failing_rows, len(large.sample)) == (False, False, 4, 2)
    assert "`bistro__orders__" in large.query  # the physical table the promotion is about to expose
    assert set(ctx.state.get_environment("prod").standalone_audits) == set(by_name)
    assert spark.catalog.tableExists("bistro.orders")
    assert not spark.catalog.databaseExists("checks")  # an audit has no table and no view
    assert plan_for(ctx).is_noop


def test_a_failing_blocking_audit_only_model_stops_the_promotion(spark, project_dir, make_context):
    _edit(project_dir / "models" / "customers.sql", "[1, 2, 3]", "[1, 2]")
    ctx = make_context(project_dir)

    with pytest.raises(StandaloneAuditFailure) as raised:
        apply_plan(ctx, plan_for(ctx))

    assert "checks.orders_have_customers (2 offending row(s))" in str(raised.value)
    assert raised.value.path == project_dir / "models" / "checks" / "orders_have_customers.sql"
    assert ctx.state.get_environment("prod") is None
    assert not spark.catalog.databaseExists("bistro")  # no view moved
