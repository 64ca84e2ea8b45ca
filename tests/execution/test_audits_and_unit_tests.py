"""Audits stop a plan before promotion; the example project's YAML unit tests pass on Spark and can fail."""

import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.unit_tests import run_unit_tests
from tests.execution.test_apply import END, START

EXAMPLE = Path(__file__).parents[2] / "example_project"


def test_failing_blocking_audit_leaves_interval_missing_and_environment_unpromoted(spark, mini_project, make_context):
    daily = mini_project / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("SUM(amount) AS total", "CAST(NULL AS BIGINT) AS total"))
    ctx = make_context(mini_project)
    plan = plan_for(ctx, START, END)

    with pytest.raises(ExecutionError) as raised:
        apply_plan(ctx, plan)

    assert "not_null" in str(raised.value)
    assert "offending row" in str(raised.value)
    assert ctx.state.get_intervals("shop.daily", plan.version_of("shop.daily")) == []
    assert ctx.state.get_environment("prod") is None
    assert not spark.catalog.databaseExists("shop")
    assert ctx.state.list_plan_applications()[-1].outcome == "failed"


def test_example_unit_tests_pass_and_a_wrong_expectation_fails(tmp_path, make_context, clean_catalog):
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".sparkmesh"))
    ctx = make_context(project)
    results = run_unit_tests(ctx)
    assert len(results) >= 2
    assert all(result.passed for result in results), [r.message for r in results if not r.passed]

    test_file = project / "tests" / "test_customer_status.yaml"
    test_file.write_text(test_file.read_text().replace("last_order_id: 11,", "last_order_id: 99,"))
    failing = [r for r in run_unit_tests(make_context(project)) if not r.passed]
    assert [r.name for r in failing] == ["test_customer_status_keeps_latest_order"]
    assert "expected" in failing[0].message


def test_an_incremental_models_audits_read_only_the_interval_written(spark, mini_project, make_context):
    """As in SQLMesh: a run audits its new interval, so a bad row of an earlier day neither fails it nor is read."""
    ctx = make_context(mini_project)
    plan = plan_for(ctx, START, END - timedelta(days=1))
    apply_plan(ctx, plan)
    table = plan.tables(())["shop.daily"]
    # An old bad row, added to the segment of the period table that holds January 2 (``engine.period_tables``).
    holding = f"SELECT DISTINCT sparkmesh_month FROM {table}__data WHERE ds = DATE'2024-01-02'"
    [(segment,)] = ctx.engine.catalog.query_rows(holding)
    spark.sql(f"INSERT INTO {table}__data SELECT DATE'2024-01-02', NULL, 0, '{segment}'").collect()
    assert ctx.engine.catalog.query_rows(f"SELECT COUNT(*) FROM {table} WHERE total IS NULL") == [(1,)]

    ran = apply_plan(ctx, plan_for(ctx, START, END))  # the last day only
    [daily] = [result for result in ran.models if result.model == "shop.daily"]
    assert [a.failing_rows for a in daily.audits] == [0]
    assert "2024-01-05" in daily.audits[0].query and "2024-01-06" in daily.audits[0].query
    assert ctx.state.get_intervals("shop.daily", plan.version_of("shop.daily"))[-1].end == END


def test_a_test_spark_cannot_run_or_naming_a_column_the_model_lacks_fails_alone(tmp_path, make_context, clean_catalog):
    # As SQLMesh reports them: each test its own result; a user's project stopped at the first such test before.
    project = tmp_path / "p"
    (project / "models").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
    (project / "models" / "src.sql").write_text("MODEL (name main.src, kind FULL);\nSELECT 1 AS a\n")
    (project / "models" / "m.sql").write_text("MODEL (name main.m, kind VIEW);\nSELECT a FROM main.src\n")
    (project / "models" / "n.sql").write_text("MODEL (name main.n, kind VIEW);\nSELECT a, no_such_function(a) AS b FROM main.src\n")
    tests = {"test_m": ("main.m", "{a: 1, b: 2}"), "test_n": ("main.n", "{a: 1, b: 2}"), "test_ok": ("main.m", "{a: 1}")}
    (project / "tests" / "t.yaml").write_text("".join(
        f"{name}:\n  model: {model}\n  inputs:\n    main.src:\n      rows: [{{a: 1}}]\n  outputs:\n    query:\n      rows: [{row}]\n"
        for name, (model, row) in tests.items()))
    results = {result.name: result for result in run_unit_tests(make_context(project))}
    assert results["test_m"].message == "the outputs name column(s) b that the model does not return (it returns: a)"
    assert results["test_n"].message.startswith("error: Spark refused the statement: [UNRESOLVED_ROUTINE]")
    assert results["test_ok"].passed and not results["test_m"].passed and not results["test_n"].passed


def test_a_custom_audit_reads_the_time_macros_of_the_interval_it_audits(spark, mini_project, make_context):
    # SQLMesh renders an audit with the audited interval's time macros; here @start_ds had "no value" and the write
    # failed. The audit finds the days of its interval whose total is over 0 (the execution time is 2024-01-06).
    (mini_project / "audits").mkdir(exist_ok=True)
    (mini_project / "audits" / "window.sql").write_text(
        "AUDIT (name in_window, blocking false);\n"
        "SELECT * FROM @this_model WHERE ds BETWEEN @start_ds AND @end_ds AND total > 0 AND @execution_ds > '2000-01-01'\n")
    daily = mini_project / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("audits (not_null(columns := (ds, total)))", "audits (in_window)"))
    ctx = make_context(mini_project)
    plan = plan_for(ctx, START, START + timedelta(days=2))
    results = apply_plan(ctx, plan)
    audits = [a for r in results.models if r.model == "shop.daily" for a in r.audits]
    (audit,) = audits  # one batch of both days
    assert "ds BETWEEN '2024-01-01' AND '2024-01-02'" in audit.query and "'2024-01-06' > '2000-01-01'" in audit.query
    assert (audit.passed, audit.failing_rows) == (False, 2)
