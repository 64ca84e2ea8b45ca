"""Table profiles: one query per relation over every column type a model may hold, and the comparison of two."""

from __future__ import annotations

import pytest

pytest.importorskip("dagster_sparkmesh.engine.adapter")

from dagster_sparkmesh.dagster.branch_markdown import comparisons_markdown  # noqa: E402
from dagster_sparkmesh.engine.table_profiles import profile_table  # noqa: E402
from dagster_sparkmesh.execution.branch_environments import ModelComparison  # noqa: E402


ROWS = """
SELECT * FROM VALUES
  (1, 9223372036854775807L, 0.1D, CAST(1.50 AS DECIMAL(10,2)), 'a|b\nc', true, DATE'2024-01-01',
   array(1, 2), map('k', 1), named_struct('x', 1)),
  (2, 9223372036854775807L, 0.2D, CAST(2.25 AS DECIMAL(10,2)), NULL, false, DATE'2024-01-03',
   array(3), map('k', 2), named_struct('x', 2))
AS t(id, big, ratio, price, label, flag, ds, items, attributes, detail)
"""


def test_every_column_type_is_profiled_in_one_query(engine, spark, clean_catalog):
    spark.sql("CREATE DATABASE profiles")
    spark.sql(f"CREATE TABLE profiles.before USING parquet AS {ROWS}")
    spark.sql(f"CREATE TABLE profiles.after USING parquet AS {ROWS.replace('0.2D', '0.3D').replace('true', 'false')}")
    before = profile_table(engine, "profiles.before")
    after = profile_table(engine, "profiles.after")
    assert before.rows == 2
    assert before.column("big").total is None  # the sum overflows: no number rather than an error
    assert before.column("price").total == "3.75" and before.column("ds").maximum == "2024-01-03"
    assert before.column("label").nulls == 1 and before.column("label").distinct == 1
    assert before.column("flag").total == "1" and after.column("flag").total == "0"
    assert before.column("attributes").distinct == 0 and before.column("attributes").minimum is None  # a map
    comparison = ModelComparison(model="profiles.t", prod=before, branch=after)
    assert comparison.changed_columns == ("ratio", "flag")
    markdown = comparisons_markdown([comparison])
    assert "| `ratio` | total | 0.30000000000000004 | 0.4 |" in markdown
    assert "| `label` |" not in markdown  # unchanged


def test_float_sums_in_another_order_are_the_same_and_a_dropped_column_is_a_change(engine, spark, clean_catalog):
    spark.sql("CREATE DATABASE profiles")
    spark.sql("CREATE TABLE profiles.a USING parquet AS SELECT id * 0.1D AS x, id FROM range(1000)")
    spark.sql("CREATE TABLE profiles.b USING parquet AS SELECT x FROM profiles.a ORDER BY x DESC")
    a, b = profile_table(engine, "profiles.a"), profile_table(engine, "profiles.b")
    assert not a.column("x").differs_from(b.column("x"))
    comparison = ModelComparison(model="profiles.a", prod=a, branch=b)
    assert comparison.changed_columns == ("id",)
    assert "| `id` | (removed) | present | - |" in comparisons_markdown([comparison])
