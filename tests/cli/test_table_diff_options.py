"""``table-diff`` options on real Spark: ``--decimals``, ``--skip``, ``-o/--on`` and ``--show-sample``.

prod and dev of the tiny project differ in two columns of ``shop.daily``: ``total`` by 0.0004 (equal once rounded
to 3 decimals, the default) and ``orders`` by one. Each option must change what the diff reports.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke

WINDOW = ["--start", "2024-01-01", "--end", "2024-01-03"]
PROD_TOTAL = "CAST(SUM(amount) AS DOUBLE) AS total"


@pytest.fixture(scope="module")
def environments(tmp_path_factory, spark):
    """prod and dev applied once for the module; the diffs only read them."""
    from dagster_sparkmesh.engine.adapter import SparkEngine

    engine = SparkEngine(spark)
    project = harness.write_tiny_project(tmp_path_factory.mktemp("table_diff") / "tiny")
    _edit_daily(project, "SUM(amount) AS total", PROD_TOTAL)
    prod, _ = invoke(project, ["plan", "prod", "--auto-apply", *WINDOW], engine)
    assert prod.exit_code == 0, prod.output
    _edit_daily(project, PROD_TOTAL, "CAST(SUM(amount) AS DOUBLE) + 0.0004 AS total")
    _edit_daily(project, "COUNT(*) AS orders", "COUNT(*) + 1 AS orders")
    dev, _ = invoke(project, ["plan", "dev", "--auto-apply", *WINDOW], engine)
    assert dev.exit_code == 0, dev.output
    yield project, engine
    for (name,) in spark.sql("SHOW DATABASES").collect():
        if name != "default":
            spark.sql(f"DROP DATABASE IF EXISTS `{name}` CASCADE")


def _edit_daily(project: Path, old: str, new: str) -> None:
    path = project / "models" / "daily.sql"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _diff(environments, *args: str) -> str:
    project, engine = environments
    result, _ = invoke(project, ["table-diff", "prod:dev", *args], engine)
    assert result.exit_code == 0, result.output
    return result.output


def _differing(output: str) -> dict[str, int]:
    """Column → rows that differ, from the Values table."""
    values = output.split("Values", 1)[1]
    return {name: int(count) for name, count in re.findall(r"[│|] (\w+)\s+[│|] (\d+)\s+[│|] [\d.]+%", values)}


def _counts(output: str) -> dict[str, tuple[int, int]]:
    """Row label → (source, target), from the Rows table."""
    rows = output.split("Rows (joined on", 1)[1].split("Values", 1)[0]
    return {label.strip(): (int(a), int(b)) for label, a, b in re.findall(r"[│|] ([a-z ]+?)\s+[│|]\s+(\d+)\s+[│|]\s+(\d+)", rows)}


def test_default_rounding_hides_the_small_total_change(environments):
    output = _diff(environments, "shop.daily")
    assert "Rows (joined on ds)" in output
    assert _differing(output) == {"total": 0, "orders": 3}
    assert "The tables differ" in output


def test_a_selector_that_picks_one_model_names_it(environments):
    assert _differing(_diff(environments, "shop.dai*")) == {"total": 0, "orders": 3}


def test_decimals_reveals_differences_beyond_the_default_rounding(environments):
    assert _differing(_diff(environments, "shop.daily", "--decimals", "4")) == {"total": 3, "orders": 3}
    assert _differing(_diff(environments, "shop.daily", "--decimals", "3")) == {"total": 0, "orders": 3}


def test_skip_leaves_a_column_out_of_the_comparison(environments):
    skipped = _diff(environments, "shop.daily", "--skip", "orders")
    assert _differing(skipped) == {"total": 0}
    assert "No differences" in skipped

    both = _diff(environments, "shop.daily", "--skip", "orders", "--skip", "total")
    assert "Values: no common column besides the keys" in both

    finer = _diff(environments, "shop.daily", "--skip", "orders", "--decimals", "4")
    assert _differing(finer) == {"total": 3} and "The tables differ" in finer


def test_on_joins_on_other_keys(environments):
    by_day = _counts(_diff(environments, "shop.daily"))
    assert by_day["matched by key"] == (3, 3) and by_day["only here"] == (0, 0)

    # orders changed in every row: joined on (ds, orders) no row of prod finds its dev counterpart.
    output = _diff(environments, "shop.daily", "-o", "ds", "--on", "orders")
    assert "Rows (joined on ds, orders)" in output
    counts = _counts(output)
    assert counts["matched by key"] == (0, 0) and counts["only here"] == (3, 3)
    assert "orders" not in _differing(output)  # a key column is not compared


def test_on_is_required_for_a_model_without_grain(environments):
    project, engine = environments
    refused, _ = invoke(project, ["table-diff", "prod:dev", "raw.events"], engine)
    assert refused.exit_code == 2
    assert "raw.events has no grain or unique key" in refused.output and "-o/--on KEY" in refused.output

    output = _diff(environments, "raw.events", "-o", "ds", "-o", "id")
    assert _counts(output)["matched by key"] == (9, 9)
    assert _differing(output) == {"amount": 0} and "No differences" in output


def test_show_sample_lists_keys_and_only_the_columns_that_differ(environments):
    plain = _diff(environments, "shop.daily")
    assert "Sample of differing rows" not in plain

    sampled = _diff(environments, "shop.daily", "--show-sample")
    sample = sampled.split("Sample of differing rows", 1)[1]
    assert "orders (source)" in sample and "orders (target)" in sample
    assert "total (source)" not in sample  # equal after rounding: not shown
    rows = re.findall(r"[│|] (2024-01-0\d)\s+[│|] (\d+)\s+[│|] (\d+)", sample)
    assert sorted(rows) == [("2024-01-01", "3", "4"), ("2024-01-02", "3", "4"), ("2024-01-03", "3", "4")]
