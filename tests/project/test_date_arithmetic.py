"""A date or timestamp plus a number of units (``project.sql.date_arithmetic``): Snowflake's ``DATEADD(hour, 2, ts)``
and Trino's ``date_add('hour', 2, ts)`` were written by sqlglot as Spark's ``DATE_ADD(ts, 2)``, two *days* later, a
DATE; a day or a month lost the time of day. The values are SQLMesh 0.236.4's on DuckDB for the same models (the
fifth hunt's repro, /tmp/hunt5/repro/sf_trino_dateadd_time_units)."""

from __future__ import annotations

from datetime import date, datetime

import pytest
import sqlglot

from dagster_sparkmesh.project.sql.model import canonical_sql
from dagster_sparkmesh.project.sql.spark_support import with_spark_equivalents


def spark_sql(sql: str, dialect: str) -> str:
    return canonical_sql(with_spark_equivalents(sqlglot.parse_one(sql, read=dialect), dialect=dialect))


@pytest.mark.parametrize(
    ("dialect", "sql", "written"),
    [
        ("snowflake",
         "SELECT DATEADD(hour, 2, ts), DATEADD(ms, 5, ts), DATEADD(day, 1, ts), DATEADD(week, -1, ts), "
         "DATEADD(quarter, n + 1, ts), DATEADD(day, n, d)",
         "SELECT DATE_ADD(HOUR, 2, ts), DATE_ADD(MILLISECOND, 5, ts), ts + INTERVAL '1' DAY, ts + INTERVAL '-7' DAY, "
         "ts + (n + 1) * INTERVAL '3' MONTH, DATE_ADD(d, n)"),
        ("trino", "SELECT date_add('minute', 90, ts), date_add('month', 1, ts)",
         "SELECT DATE_ADD(MINUTE, 90, ts), ts + 1 * INTERVAL '1' MONTH"),
        ("bigquery", "SELECT DATE_SUB(d, INTERVAL 2 MONTH), DATE_ADD(d, INTERVAL 1 DAY)",
         "SELECT d + -2 * INTERVAL '1' MONTH, d + INTERVAL '1' DAY"),
        ("tsql", "SELECT DATEADD(second, 30, ts)", "SELECT DATE_ADD(SECOND, 30, ts)"),
        # Spark's and DuckDB's own spellings were right: left as they were.
        ("spark", "SELECT DATE_ADD(ts, 2)", "SELECT DATE_ADD(ts, 2)"),
        ("duckdb", "SELECT date_add(ts, INTERVAL 2 HOUR)", "SELECT DATE_ADD(ts, INTERVAL '2' HOUR)"),
    ],
)
def test_an_addition_in_units_is_written_so_that_its_unit_counts(dialect, sql, written):
    assert spark_sql(sql, dialect) == written
    assert sqlglot.transpile(written, read="spark", write="spark")[0] == written  # rendering reads it again


def test_on_spark_units_are_added_as_the_dialects_add_them(engine):
    sql = ("SELECT DATEADD(hour, 2, ts) AS h, DATEADD(minute, 90, ts) AS m, DATEADD(second, 30, ts) AS s, "
           "TIMESTAMPADD(hour, -3, ts) AS back, DATEADD(day, 1, ts) AS d, DATEADD(month, 1, ts) AS mon, "
           "DATEADD(day, 1, dt) AS dd, DATEADD(month, 1, dt) AS dm, DATEADD(hour, 2, dt) AS dh "
           "FROM (SELECT CAST('2024-01-31 23:30:00' AS TIMESTAMP) AS ts, CAST('2024-01-31' AS DATE) AS dt)")
    frame = engine.spark.sql(spark_sql(sql, "snowflake"))
    assert tuple(frame.collect()[0]) == (
        datetime(2024, 2, 1, 1, 30), datetime(2024, 2, 1, 1, 0), datetime(2024, 1, 31, 23, 30, 30),
        datetime(2024, 1, 31, 20, 30), datetime(2024, 2, 1, 23, 30), datetime(2024, 2, 29, 23, 30),
        # A DATE stays a DATE by days and months (Snowflake's DATEADD), and is a TIMESTAMP by hours.
        date(2024, 2, 1), date(2024, 2, 29), datetime(2024, 1, 31, 2, 0),
    )
