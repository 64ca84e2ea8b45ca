"""Audits of external models run before the models that read them: a blocking failure refuses the plan."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.cli.plan_view import external_audits_text
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.external_audits import ExternalAuditFailure
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.preflight import run_preflight

CONFIG = "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  cron: '@daily'\n"


def _project(path: Path, schema: str, audit: str) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "config.yaml").write_text(CONFIG)
    (path / "external_models.yaml").write_text(
        f"- name: {schema}.customers\n  audits:\n    - name: {audit}\n      columns: '[zip]'\n"
        "  columns: {id: int, zip: string}\n"
    )
    (path / "models" / "zips.sql").write_text(
        f"MODEL (name {schema}_out.zips, kind FULL);\nSELECT DISTINCT zip FROM {schema}.customers\n"
    )
    return path


@pytest.fixture
def customers(spark, schema) -> str:
    spark.sql(f"CREATE TABLE {schema}.customers USING parquet AS SELECT * FROM VALUES (1, '02134'), (2, NULL) AS t(id, zip)")
    yield schema
    spark.sql(f"DROP DATABASE IF EXISTS {schema}_out CASCADE")


def test_a_blocking_external_audit_refuses_the_plan_before_any_write(tmp_path, spark, customers, make_context):
    ctx = make_context(_project(tmp_path / "p", customers, "not_null"))
    plan = plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 2))
    with pytest.raises(ExternalAuditFailure) as error:
        apply_plan(ctx, plan)
    assert f"external model {customers}.customers: blocking audit not_null found 1 offending row(s)" in str(error.value)
    assert f"read by {customers}_out.zips" in str(error.value)
    assert (error.value.path, error.value.line) == (tmp_path / "p" / "external_models.yaml", 1)
    assert ctx.state.list_plan_applications() == []
    assert not spark.catalog.databaseExists(f"{customers}_out")


def test_a_non_blocking_external_audit_reports_and_lets_the_plan_run(tmp_path, spark, customers, make_context):
    ctx = make_context(_project(tmp_path / "p", customers, "not_null_non_blocking"))
    plan = plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 2))
    report = run_preflight(ctx, plan, plan.missing_intervals)
    expected = [(f"{customers}.customers", "not_null_non_blocking", 1)]
    assert [(name, a.name, a.failing_rows) for name, a in report.external_audits] == expected
    result = apply_plan(ctx, plan)
    assert [(name, a.name, a.failing_rows) for name, a in result.external_audits] == expected
    shown = external_audits_text(result.external_audits).plain
    assert f"{customers}.customers: not_null_non_blocking: 1 offending rows (non-blocking: a warning)" in shown
    assert spark.sql(f"SELECT COUNT(*) FROM {customers}_out.zips").collect()[0][0] == 2
