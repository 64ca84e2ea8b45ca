"""fetchdf, table-diff and test through click on the test session's Spark; rendering helpers without Spark."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from rich.console import Console

from dagster_sparkmesh.cli.data_commands import json_value, parse_environments, table_diff_view
from dagster_sparkmesh.engine.table_diff import TableDiff

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(helpers)

UNIT_TESTS = """
test_daily_sums_amounts:
  model: shop.daily
  inputs:
    raw.events:
      rows:
        - {ds: 2024-01-02, id: 1, amount: 10}
        - {ds: 2024-01-02, id: 2, amount: 20}
        - {ds: 2024-01-03, id: 3, amount: 99}
  outputs:
    query:
      rows:
        - {ds: 2024-01-02, total: 30, orders: 2}
  vars:
    start: 2024-01-02
    end: 2024-01-02
"""


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    project = helpers.write_tiny_project(tmp_path / "tiny")
    (project / "tests").mkdir()
    (project / "tests" / "test_daily.yaml").write_text(textwrap.dedent(UNIT_TESTS))
    return project


def invoke(project: Path, args: list[str], engine=None):
    return CliRunner().invoke(helpers.cli(project, helpers.CountingFactory(engine)), args)


def test_fetchdf_json_keeps_query_column_order_and_iso_dates(tiny, engine):
    sql = "SELECT 2 AS b, DATE'2024-01-31' AS a, CAST(1.50 AS DECIMAL(5, 2)) AS c, TIMESTAMP'2024-01-31 05:06:07' AS t"

    result = invoke(tiny, ["fetchdf", sql, "--json"], engine)

    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert rows == [{"b": 2, "a": "2024-01-31", "c": 1.5, "t": "2024-01-31T05:06:07"}]
    assert list(rows[0]) == ["b", "a", "c", "t"]


def test_fetchdf_prints_a_table_and_runs_statements(tiny, engine, spark):
    try:
        created = invoke(tiny, ["fetchdf", "CREATE DATABASE IF NOT EXISTS cli_fetch_test"], engine)
        shown = invoke(tiny, ["fetchdf", "SELECT explode(sequence(1, 3)) AS n"], engine)
        assert created.exit_code == 0 and created.output.strip() == "OK"
        assert "cli_fetch_test" in [row[0] for row in spark.sql("SHOW DATABASES").collect()]
        assert "3 row(s)" in shown.output and " n " in shown.output
    finally:
        spark.sql("DROP DATABASE IF EXISTS cli_fetch_test")


def test_fetchdf_reports_bad_sql_as_a_user_error(tiny, engine):
    result = invoke(tiny, ["fetchdf", "SELEC 1"], engine)
    assert result.exit_code == 2
    assert result.output.startswith("Error:")


def test_unit_tests_pass_and_a_failing_one_exits_2_with_the_rows(tiny, engine):
    passed = invoke(tiny, ["test"], engine)
    assert passed.exit_code == 0, passed.output
    assert "PASS test_daily_sums_amounts (shop.daily)" in passed.output

    broken = tiny / "tests" / "test_daily.yaml"
    broken.write_text(broken.read_text().replace("total: 30", "total: 31"))
    failed = invoke(tiny, ["test", "shop.daily"], engine)
    assert failed.exit_code == 2
    assert "FAIL test_daily_sums_amounts" in failed.output
    assert "31" in failed.output and "30" in failed.output
    assert "1 of 1 unit test(s) failed" in failed.output


def test_table_diff_needs_source_colon_target(tiny):
    result = invoke(tiny, ["table-diff", "prod", "shop.daily"])
    assert result.exit_code == 2
    assert "is not SOURCE:TARGET" in result.output


def test_parse_environments():
    assert parse_environments("prod:dev") == ("prod", "dev")
    with pytest.raises(click.BadParameter):
        parse_environments("prod:")


def test_json_values():
    assert json_value(date(2024, 1, 2)) == "2024-01-02"
    assert json_value(datetime(2024, 1, 2, 3, 4)) == "2024-01-02T03:04:00"
    assert json_value(Decimal("12.00")) == 12 and json_value(Decimal("0.25")) == 0.25
    assert json_value([Decimal("1"), None]) == [1, None]
    # Day-time intervals (PostgreSQL's `date - date` read on Spark) as ISO 8601 durations, not a traceback.
    assert [json_value(value) for value in (timedelta(days=6), timedelta(hours=1, minutes=30), -timedelta(seconds=0.5))] == [
        "P6D", "PT1H30M", "-PT0.5S"]


def test_table_diff_view_shows_schema_counts_mismatches_and_sample():
    diff = TableDiff(
        model="shop.daily", source="shop.daily", target="shop__dev.daily",
        added_columns=(("extra", "int"),), removed_columns=(), retyped_columns=(("total", "bigint", "double"),),
        source_rows=3, target_rows=4, keys=("ds",), only_in_source=0, only_in_target=1, matched=3,
        mismatches=(("total", 2), ("orders", 0)),
        sample_header=("ds", "total (source)", "total (target)"), sample=(("2024-01-01", "60", "120"),),
    )
    console = Console(width=120, record=True)
    for part in table_diff_view(diff, show_sample=True):
        console.print(part)
    text = console.export_text()

    assert "added" in text and "extra" in text and "bigint -> double" in text
    assert "only here" in text and "66.7%" in text
    assert "Sample of differing rows" in text and "120" in text
    assert "The tables differ" in text
