"""The whole match of a regular-expression extraction where the dialect returns it (``project.sql.regexp_groups``):
BigQuery's ``REGEXP_EXTRACT(s, r'\\d+')`` (no capturing group) stopped the backfill on Spark, whose group defaults to
1 (the fifth hunt: SQLMesh 0.236.4 returns ``12``), and Redshift's ``REGEXP_SUBSTR`` of a pattern with a group gave
the group, not the whole match."""

from __future__ import annotations

import pytest
import sqlglot

from dagster_sparkmesh.project.sql.model import canonical_sql
from dagster_sparkmesh.project.sql.regexp_groups import has_capturing_group
from dagster_sparkmesh.project.sql.spark_support import with_spark_equivalents


def spark_sql(sql: str, dialect: str) -> str:
    return canonical_sql(with_spark_equivalents(sqlglot.parse_one(sql, read=dialect), dialect=dialect))


@pytest.mark.parametrize(
    ("pattern", "captures"),
    [(r"\d+", False), (r"(\d+)", True), (r"(?:a)b", False), (r"(?P<n>a)", True), (r"(?<n>a)", True),
     (r"(?<=a)b", False), (r"\(a\)", False), (r"[(]a", False), (r"[]()]", False), (r"[^]()]x", False),
     (r"[a](b)", True), (r"(?i)abc", False), (r"a\\(b)", True)],
)
def test_a_capturing_group_is_told_from_escapes_classes_and_other_parentheses(pattern, captures):
    assert has_capturing_group(pattern) is captures


def test_the_whole_match_is_group_zero_where_the_dialect_returns_it():
    assert spark_sql(r"SELECT REGEXP_EXTRACT(s, r'\d+'), REGEXP_EXTRACT(s, r'(\d+)-x'), REGEXP_EXTRACT(s, p)",
                     "bigquery") == r"SELECT REGEXP_EXTRACT(s, '\\d+', 0), REGEXP_EXTRACT(s, '(\\d+)-x'), REGEXP_EXTRACT(s, p)"
    assert spark_sql("SELECT REGEXP_SUBSTR(s, '([0-9]+)x')", "redshift") == "SELECT REGEXP_EXTRACT(s, '([0-9]+)x', 0)"
    assert spark_sql("SELECT REGEXP_EXTRACT(s, '(a)b')", "spark") == "SELECT REGEXP_EXTRACT(s, '(a)b')"


def test_on_spark_the_extractions_return_what_the_dialects_return(engine):
    bigquery = engine.spark.sql(spark_sql(
        r"SELECT REGEXP_EXTRACT(s, r'\d+') AS whole, REGEXP_EXTRACT(s, r'(\d+)-x') AS grouped "
        "FROM (SELECT 'ab12-x' AS s)", "bigquery"))
    assert tuple(bigquery.collect()[0]) == ("12", "12")
    redshift = engine.spark.sql(spark_sql("SELECT REGEXP_SUBSTR(s, '([0-9]+)-x') AS m FROM (SELECT 'ab12-x' AS s)",
                                          "redshift"))
    assert tuple(redshift.collect()[0]) == ("12-x",)
