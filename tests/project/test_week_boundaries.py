"""A difference in weeks (``project.sql.week_boundaries``): Snowflake, BigQuery and T-SQL count the week starts
crossed, each with its own first day of the week, where Spark's ``DATEDIFF(WEEK, ...)`` counts whole weeks (Sunday
to Monday: 1 week in Snowflake, 0 in Spark). The rows are those SQLMesh 0.236.4 computes (on DuckDB) for Snowflake
and BigQuery; T-SQL's follow its documentation (Sunday, whatever DATEFIRST), where SQLMesh counts whole weeks."""

from __future__ import annotations

import pytest
import sqlglot

from dagster_sparkmesh.project.sql.spark_support import with_spark_equivalents

PAIRS = ("(VALUES (1, DATE '2023-12-31', DATE '2024-02-29'), (2, DATE '2024-01-01', DATE '2023-12-31'), "
         "(3, DATE '2024-01-07', DATE '2024-01-08'), (4, DATE '2024-01-06', DATE '2024-01-07'), "
         "(5, DATE '2024-01-05', DATE '2024-01-06')) AS t(id, a, b)")
"""Sun -> Thu eight weeks later, Mon -> the Sunday before, Sun -> Mon, Sat -> Sun, Fri -> Sat."""
FROM_MONDAY = "(DATEDIFF(DATE_SUB(CAST(b AS DATE), (DAYOFWEEK(b) + 5) % 7), DATE_SUB(CAST(a AS DATE), (DAYOFWEEK(a) + 5) % 7)) DIV 7)"
FROM_SUNDAY = "(DATEDIFF(DATE_SUB(CAST(b AS DATE), (DAYOFWEEK(b) + 6) % 7), DATE_SUB(CAST(a AS DATE), (DAYOFWEEK(a) + 6) % 7)) DIV 7)"


def spark_sql(sql: str, dialect: str) -> str:
    return with_spark_equivalents(sqlglot.parse_one(sql, read=dialect), dialect=dialect).sql(dialect="spark")


@pytest.mark.parametrize(
    ("dialect", "sql", "written"),
    [
        ("snowflake", "SELECT DATEDIFF(week, a, b)", f"SELECT {FROM_MONDAY}"),
        ("bigquery", "SELECT DATE_DIFF(b, a, WEEK(MONDAY))", f"SELECT {FROM_MONDAY}"),
        ("bigquery", "SELECT DATE_DIFF(b, a, ISOWEEK)", f"SELECT {FROM_MONDAY}"),
        ("bigquery", "SELECT DATE_DIFF(b, a, WEEK)", f"SELECT {FROM_SUNDAY}"),
        ("bigquery", "SELECT DATE_DIFF(b, a, WEEK(SATURDAY))",
         "SELECT (DATEDIFF(DATE_SUB(CAST(b AS DATE), (DAYOFWEEK(b) + 0) % 7), DATE_SUB(CAST(a AS DATE), "
         "(DAYOFWEEK(a) + 0) % 7)) DIV 7)"),
        ("tsql", "SELECT DATEDIFF(week, a, b)",
         "SELECT (DATEDIFF(DATE_SUB(CAST(CAST(b AS TIMESTAMP) AS DATE), (DAYOFWEEK(CAST(b AS TIMESTAMP)) + 6) % 7), "
         "DATE_SUB(CAST(CAST(a AS TIMESTAMP) AS DATE), (DAYOFWEEK(CAST(a AS TIMESTAMP)) + 6) % 7)) DIV 7)"),
        # DuckDB counts whole weeks, as Spark does; other units keep their truncation.
        ("duckdb", "SELECT DATE_DIFF('week', a, b)", "SELECT DATEDIFF(WEEK, a, b)"),
        ("snowflake", "SELECT DATEDIFF(month, a, b)", "SELECT DATEDIFF(MONTH, DATE_TRUNC('MONTH', a), DATE_TRUNC('MONTH', b))"),
    ],
)
def test_the_spark_sql_written(dialect, sql, written):
    assert spark_sql(sql, dialect) == written


@pytest.mark.parametrize(
    ("dialect", "weeks", "expected"),
    [
        ("snowflake", "DATEDIFF(week, a, b)", [9, -1, 1, 0, 0]),
        ("bigquery", "DATE_DIFF(b, a, WEEK(MONDAY))", [9, -1, 1, 0, 0]),
        ("bigquery", "DATE_DIFF(b, a, ISOWEEK)", [9, -1, 1, 0, 0]),
        ("bigquery", "DATE_DIFF(b, a, WEEK)", [8, 0, 0, 1, 0]),
        ("bigquery", "DATE_DIFF(b, a, WEEK(SATURDAY))", [8, 0, 0, 0, 1]),
        ("tsql", "DATEDIFF(week, a, b)", [8, 0, 0, 1, 0]),
        ("duckdb", "date_diff('week', a, b)", [8, 0, 0, 0, 0]),
    ],
)
def test_spark_counts_the_weeks_the_dialect_counts(engine, dialect, weeks, expected):
    rows = engine.spark.sql(spark_sql(f"SELECT id, {weeks} AS w FROM {PAIRS} ORDER BY id", dialect)).collect()
    assert [row["w"] for row in rows] == expected


def test_the_time_of_day_does_not_count(engine):
    sql = "SELECT DATEDIFF(week, '2024-01-07 23:00:00'::timestamp, '2024-01-08 01:00:00'::timestamp) AS w"
    assert engine.spark.sql(spark_sql(sql, "snowflake")).collect()[0]["w"] == 1
