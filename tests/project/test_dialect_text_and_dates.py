"""Everyday text and date functions of PostgreSQL, Snowflake and BigQuery that stopped a project (refused at load,
or refused by Spark at run time) where SQLMesh runs them (``project.sql.text_and_date_functions``,
``project.sql.date_formats``): the Spark SQL written, and on Spark the values the source dialect returns.

PostgreSQL's values were read on PostgreSQL 15; Snowflake's and BigQuery's come from their documentation (SPLIT_PART's
part 0, the format elements, the week units, UNIX_SECONDS), as neither can run here."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.sql.spark_support import check_runs_on_spark, with_spark_equivalents


def spark_sql(sql: str, dialect: str) -> str:
    return with_spark_equivalents(sqlglot.parse_one(sql, read=dialect), dialect=dialect).sql(dialect="spark")


def rows(engine, sql: str, dialect: str) -> list[tuple]:
    return [tuple(row) for row in engine.catalog.query_rows(spark_sql(sql, dialect))]


def refusal(sql: str, dialect: str) -> ProjectError:
    statement = with_spark_equivalents(sqlglot.parse_one(sql, read=dialect), dialect=dialect)
    with pytest.raises(ProjectError) as raised:
        check_runs_on_spark(statement, dialect=dialect, path=Path("models/m.sql"), body=sql)
    return raised.value


@pytest.mark.parametrize(
    ("dialect", "sql", "written"),
    [
        ("snowflake", "SELECT TO_CHAR(d, 'YYYY-MM-DD'), TO_CHAR(d, 'YYYY-MM'), TO_VARCHAR(d, 'DD/MM/YYYY')",
         "SELECT DATE_FORMAT(d, 'yyyy-MM-dd'), DATE_FORMAT(d, 'yyyy-MM'), DATE_FORMAT(d, 'dd/MM/yyyy')"),
        ("snowflake", "SELECT TO_CHAR(t, 'yyyy-mm-dd\"T\"hh24:mi:ss.ff3')",
         "SELECT DATE_FORMAT(t, 'yyyy-MM-dd\\'T\\'HH:mm:ss.SSS')"),
        ("snowflake", "SELECT TO_CHAR(d)", "SELECT CAST(d AS STRING)"),
        ("snowflake", "SELECT SPLIT_PART(s, ',', 0), SPLIT_PART(s, ',', -1), SPLIT_PART(s, ',', p)",
         "SELECT SPLIT_PART(s, ',', 1), SPLIT_PART(s, ',', -1), SPLIT_PART(s, ',', CASE WHEN p = 0 THEN 1 ELSE p END)"),
        ("postgres", "SELECT split_part(s, ',', 2)", "SELECT SPLIT_PART(s, ',', 2)"),
        ("bigquery", "SELECT DATE_TRUNC(d, WEEK), DATE_TRUNC(d, ISOWEEK), DATE_TRUNC(d, MONTH)",
         "SELECT DATE_SUB(CAST(d AS DATE), (DAYOFWEEK(d) + 6) % 7), DATE_SUB(CAST(d AS DATE), (DAYOFWEEK(d) + 5) % 7), "
         "TRUNC(d, 'MONTH')"),
        ("bigquery", "SELECT TIMESTAMP_TRUNC(t, WEEK(SATURDAY))",
         "SELECT CAST(DATE_SUB(CAST(t AS DATE), (DAYOFWEEK(t) + 0) % 7) AS TIMESTAMP)"),
        ("bigquery", "SELECT EXTRACT(DAYOFYEAR FROM d), EXTRACT(ISOWEEK FROM d), EXTRACT(DAYOFWEEK FROM d)",
         "SELECT EXTRACT(DOY FROM d), EXTRACT(WEEK FROM d), EXTRACT(DAYOFWEEK FROM d)"),
        ("bigquery", "SELECT DATETIME_DIFF(a, b, ISOWEEK), DATETIME_DIFF(a, b, DAY)",
         "SELECT (DATEDIFF(DATE_SUB(CAST(a AS DATE), (DAYOFWEEK(a) + 5) % 7), DATE_SUB(CAST(b AS DATE), "
         "(DAYOFWEEK(b) + 5) % 7)) DIV 7), DATEDIFF(DAY, DATE_TRUNC('DAY', b), DATE_TRUNC('DAY', a))"),
        ("bigquery", "SELECT EXTRACT(WEEK FROM d)", "SELECT ((DAYOFYEAR(d) - (DAYOFWEEK(d) + 6) % 7 + 6) DIV 7)"),
        ("postgres", "SELECT EXTRACT(WEEK FROM d)", "SELECT EXTRACT(WEEK FROM d)"),  # ISO's there too
        ("snowflake", "SELECT EXTRACT(dayofyear FROM d)", "SELECT EXTRACT(DOY FROM d)"),
        ("bigquery", "SELECT UNIX_SECONDS(t), UNIX_MILLIS(CAST(t AS TIMESTAMP))",
         "SELECT UNIX_SECONDS(CAST(t AS TIMESTAMP)), UNIX_MILLIS(CAST(t AS TIMESTAMP))"),
        ("postgres", "SELECT string_to_array(s, '.')",
         "SELECT IF(s = '', CAST(ARRAY() AS ARRAY<STRING>), SPLIT(s, '\\\\.', -1))"),
        ("postgres", "SELECT to_char(d, 'Mon DD, YYYY'), to_char(d, 'Day'), to_char(d, 'FMDay')",
         "SELECT DATE_FORMAT(d, 'MMM dd, yyyy'), RPAD(DATE_FORMAT(d, 'EEEE'), 9, ' '), DATE_FORMAT(d, 'EEEE')"),
        ("postgres", "SELECT (j::jsonb->'n')::int", "SELECT CAST(CASE WHEN TYPEOF((GET_JSON_OBJECT(j, '$.n'))) IN "
         "('double', 'float') THEN BROUND(CAST((GET_JSON_OBJECT(j, '$.n')) AS DECIMAL(38, 18))) ELSE "
         "ROUND(CAST((GET_JSON_OBJECT(j, '$.n')) AS DECIMAL(38, 18))) END AS INT)"),
        ("postgres", "SELECT j::json->>'a', j::jsonb->'b'->>'c', (j::json)->>'a'",
         "SELECT GET_JSON_OBJECT(j, '$.a'), GET_JSON_OBJECT(GET_JSON_OBJECT(j, '$.b'), '$.c'), "
         "GET_JSON_OBJECT(j, '$.a')"),
        ("postgres", "SELECT initcap(s)",
         "SELECT REGEXP_REPLACE(INITCAP(REGEXP_REPLACE(s, '([^\\\\p{L}\\\\p{N}])', '$1 ')), "
         "'([^\\\\p{L}\\\\p{N}]) ', '$1')"),
        # Other dialects keep what they had.
        ("duckdb", "SELECT string_to_array(s, ','), initcap(s)",
         "SELECT SPLIT(s, CONCAT('\\\\Q', ',', '\\\\E')), INITCAP(s)"),
        ("snowflake", "SELECT DATE_TRUNC('week', d)", "SELECT DATE_TRUNC('WEEK', d)"),
    ],
)
def test_the_spark_sql_written(dialect, sql, written):
    assert spark_sql(sql, dialect) == written


def test_snowflake_to_char_of_dates_and_times(engine):
    sql = ("SELECT TO_CHAR(d, 'YYYY-MM-DD') AS iso, TO_CHAR(d, 'YYYY-MM') AS ym, TO_CHAR(d, 'DD/MM/YYYY') AS dmy, "
           "TO_CHAR(t, 'YYYY-MM-DD HH24:MI:SS.FF3') AS full, TO_CHAR(t, 'HH12:MI \"o''clock\"') AS twelve "
           "FROM (SELECT DATE '2024-01-07' AS d, TIMESTAMP '2024-01-07 15:04:05.123456' AS t)")
    assert rows(engine, sql, "snowflake") == [
        ("2024-01-07", "2024-01", "07/01/2024", "2024-01-07 15:04:05.123", "03:04 o'clock")]
    assert rows(engine, "SELECT TO_CHAR(CAST(NULL AS DATE), 'YYYY-MM') AS n", "snowflake") == [(None,)]


def test_snowflake_split_part_reads_part_zero_as_the_first(engine):
    sql = ("SELECT SPLIT_PART('a,b,c', ',', 0) AS zero, SPLIT_PART('a,b,c', ',', p) AS by_column, "
           "SPLIT_PART('a,b,c', ',', -1) AS last, SPLIT_PART('a,b,c', ',', 9) AS beyond FROM (SELECT 0 AS p)")
    assert rows(engine, sql, "snowflake") == [("a", "a", "c", "")]


def test_bigquery_weeks_start_on_sunday_or_the_day_given(engine):
    dates = "(SELECT * FROM UNNEST([DATE '2024-01-06', DATE '2024-01-07', DATE '2024-01-10', DATE '2023-12-31']) AS d)"
    sql = (f"SELECT d, DATE_TRUNC(d, WEEK) AS sunday, DATE_TRUNC(d, ISOWEEK) AS monday, "
           f"DATE_TRUNC(d, WEEK(SATURDAY)) AS saturday, DATE_DIFF(d, DATE '2024-01-01', WEEK) AS weeks, "
           f"DATE_DIFF(d, DATE '2024-01-06', ISOWEEK) AS iso_weeks FROM {dates} ORDER BY d")
    found = [tuple(str(value) for value in row[1:]) for row in rows(engine, sql, "bigquery")]
    assert found == [
        ("2023-12-31", "2023-12-25", "2023-12-30", "0", "-1"),
        ("2023-12-31", "2024-01-01", "2024-01-06", "0", "0"),
        ("2024-01-07", "2024-01-01", "2024-01-06", "1", "0"),
        ("2024-01-07", "2024-01-08", "2024-01-06", "1", "1"),
    ]
    # DATETIME_DIFF in weeks, as DATE_DIFF's (2017-10-15 is a Sunday; documented: 1 week from the Saturday before).
    datetimes = ("SELECT DATETIME_DIFF(DATETIME '2017-10-15 00:00:00', DATETIME '2017-10-14 00:00:00', WEEK) AS w, "
                 "DATETIME_DIFF(DATETIME '2017-10-15 00:00:00', DATETIME '2017-10-14 00:00:00', ISOWEEK) AS iso, "
                 "DATETIME_DIFF(DATETIME '2017-10-16 00:00:00', DATETIME '2017-10-15 23:00:00', ISOWEEK) AS iso_next")
    assert rows(engine, datetimes, "bigquery") == [(1, 0, 1)]
    # In other units, the boundaries crossed too (documented: "the number of unit boundaries between"): the dates
    # differ by 559 days, less than 559 times 24 hours apart.
    days = ("SELECT DATETIME_DIFF(DATETIME '2010-07-07 10:20:00', DATETIME '2008-12-25 15:30:00', DAY) AS d, "
            "DATETIME_DIFF(DATETIME '2024-01-01 00:00:00', DATETIME '2023-12-31 23:59:59', MINUTE) AS m")
    assert rows(engine, days, "bigquery") == [(559, 1)]
    stamp = "SELECT TIMESTAMP_TRUNC(TIMESTAMP '2024-01-10 13:00:00', WEEK) AS w"
    assert str(rows(engine, stamp, "bigquery")[0][0]) == "2024-01-07 00:00:00"


def test_bigquery_week_numbers_count_weeks_from_sunday_or_the_day_given(engine):
    # BigQuery's documented examples of EXTRACT (WEEK: from Sunday, the days before the first Sunday in week 0).
    dates = ("(SELECT * FROM UNNEST([DATE '2017-01-01', DATE '2017-01-02', DATE '2017-05-26', DATE '2017-12-31', "
             "DATE '2017-11-05']) AS d)")
    sql = (f"SELECT EXTRACT(ISOYEAR FROM d) AS isoyear, EXTRACT(ISOWEEK FROM d) AS isoweek, EXTRACT(YEAR FROM d) AS y, "
           f"EXTRACT(WEEK FROM d) AS week, EXTRACT(WEEK(MONDAY) FROM d) AS monday_week FROM {dates} ORDER BY d")
    assert rows(engine, sql, "bigquery") == [
        (2016, 52, 2017, 1, 0), (2017, 1, 2017, 1, 1), (2017, 21, 2017, 21, 21), (2017, 44, 2017, 45, 44),
        (2017, 52, 2017, 53, 52)]


def test_day_of_the_year_and_seconds_since_the_epoch(engine):
    # A seed's naive timestamps are Spark's TIMESTAMP_NTZ, which Spark's UNIX_SECONDS refused.
    engine.spark.sql("CREATE OR REPLACE TEMP VIEW naive_times AS SELECT TIMESTAMP_NTZ '2024-01-07 10:00:00.250' AS t")
    sql = ("SELECT EXTRACT(DAYOFYEAR FROM DATE '2024-12-31') AS doy, UNIX_SECONDS(t) AS naive, "
           "UNIX_SECONDS(TIMESTAMP '1969-12-31 23:59:59.5') AS before, UNIX_MILLIS(t) AS millis FROM naive_times")
    assert rows(engine, sql, "bigquery") == [(366, 1704621600, -1, 1704621600250)]


def test_postgres_string_to_array_as_postgres_splits(engine):
    sql = ("SELECT string_to_array('a,b,,c,', ',') AS parts, string_to_array('', ',') AS empty, "
           "string_to_array(NULL, ',') AS nothing, string_to_array('abc', NULL) AS chars, "
           "string_to_array('abc', '') AS whole, string_to_array('a.b|c', '.') AS dot, "
           "string_to_array('a<>b', '<>') AS two, (string_to_array('x,y', ','))[1] AS first, "
           "string_to_array('a,NA,b', ',', 'NA') AS nulls, string_to_array('a|b', sep) AS by_column "
           "FROM (SELECT '|' AS sep)")
    assert rows(engine, sql, "postgres") == [(
        ["a", "b", "", "c", ""], [], None, ["a", "b", "c"], ["abc"], ["a", "b|c"], ["a", "b"], "x", ["a", None, "b"],
        ["a", "b"])]


def test_postgres_to_char_templates_as_postgres_writes_them(engine):
    sql = ("SELECT to_char(d, 'Mon DD, YYYY') AS a, to_char(d, 'Day') AS b, to_char(d, 'FMDay') AS c, "
           "to_char(d, 'Month') AS m, to_char(d, 'FMMonth DD') AS f, "
           "to_char(d, 'DY dy Dy MON mon DAY day MONTH month') AS g "
           "FROM (VALUES (DATE '2024-01-07'), (DATE '2024-09-03'), (DATE '2024-05-31')) AS t(d) ORDER BY d")
    assert rows(engine, sql, "postgres") == [
        ("Jan 07, 2024", "Sunday   ", "Sunday", "January  ", "January 07",
         "SUN sun Sun JAN jan SUNDAY    sunday    JANUARY   january  "),
        ("May 31, 2024", "Friday   ", "Friday", "May      ", "May 31",
         "FRI fri Fri MAY may FRIDAY    friday    MAY       may      "),
        ("Sep 03, 2024", "Tuesday  ", "Tuesday", "September", "September 03",
         "TUE tue Tue SEP sep TUESDAY   tuesday   SEPTEMBER september"),
    ]
    times = ("SELECT to_char(t, 'YYYY-MM-DD HH24:MI:SS') AS a, to_char(t, 'HH12:MI AM') AS b, "
             "to_char(t, 'HH:MI pm') AS c, to_char(t, 'D DDD Q IW YY MS US') AS d, "
             "to_char(t, 'FMDD/FMMM/YYYY FMHH24') AS e, to_char(t, 'YYYY\"Q\"Q') AS f, "
             "to_char(t, 'YYYY-MM-DD\"T\"HH24:MI:SS') AS g, to_char(t, 'TMMonth TMDD') AS h "
             "FROM (VALUES (TIMESTAMP '2024-01-07 03:04:05.123456'), (TIMESTAMP '2024-12-30 15:40:00')) AS v(t) "
             "ORDER BY t")
    assert rows(engine, times, "postgres") == [
        ("2024-01-07 03:04:05", "03:04 AM", "03:04 am", "1 007 1 01 24 123 123456", "7/1/2024 3", "2024Q1",
         "2024-01-07T03:04:05", "January 07"),
        ("2024-12-30 15:40:00", "03:40 PM", "03:40 pm", "2 365 4 01 24 000 000000", "30/12/2024 15", "2024Q4",
         "2024-12-30T15:40:00", "December 30"),
    ]


def test_postgres_json_extraction_of_text_cast_to_json(engine):
    sql = ("SELECT j::json->>'a' AS a, j::jsonb->'b'->>'c' AS c, (j::jsonb->'b'->>'c')::int AS i, "
           "j::json->>'z' AS z, j::json->'arr'->>1 AS second, j::jsonb #>> '{b,c}' AS path "
           "FROM (VALUES (1, '{\"a\":\"x\",\"b\":{\"c\":5},"
           "\"z\":null,\"arr\":[1,\"two\"]}'), (2, '{\"a\":\"line\\nbreak \\\"q\\\"\",\"b\":{\"c\":\"7\"}}'), "
           "(3, NULL)) AS t(id, j) ORDER BY id")
    assert rows(engine, sql, "postgres") == [
        ("x", "5", 5, None, "two", "5"), ('line\nbreak "q"', "7", 7, None, None, "7"),
        (None, None, None, None, None, None)]


def test_initcap_capitalizes_words_as_postgres_and_bigquery_do(engine):
    texts = ["a,b-c d", "hELLO wORLD", "o'neil mcdonald", "x-12-y", "1st place", "élan-vital ÉCOLE", "a_b", "",
             "  two  spaces", "€uro x€y", "tab\tsep"]
    values = ", ".join(f"({index}, '{text.replace(chr(39), chr(39) * 2)}')" for index, text in enumerate(texts))
    sql = f"SELECT initcap(s) FROM (VALUES {values}, (99, NULL)) AS t(i, s) ORDER BY i"
    assert [row[0] for row in rows(engine, sql, "postgres")] == [  # PostgreSQL 15's
        "A,B-C D", "Hello World", "O'Neil Mcdonald", "X-12-Y", "1st Place", "Élan-Vital École", "A_B", "",
        "  Two  Spaces", "€Uro X€Y", "Tab\tSep", None]
    bigquery = ("SELECT INITCAP(\"o'neil x-12-y a_b (c)d\") AS default_delimiters, INITCAP('aa-bb cc', ' -') AS dash, "
                "INITCAP('aBC dEF', '') AS one_word")
    assert rows(engine, bigquery, "bigquery") == [("O'neil X-12-Y A_B (C)D", "Aa-Bb Cc", "Abc def")]


def test_what_spark_cannot_compute_is_refused_at_load_with_what_to_write():
    error = refusal("SELECT age(born, CURRENT_DATE) AS a FROM t", "postgres")
    assert "PostgreSQL's age() is an interval of years, months and days" in str(error)
    assert "date minus a date" in error.hint
    error = refusal("SELECT j::jsonb -> 'a' AS a FROM t", "postgres")  # PostgreSQL: '"x"', Spark would give 'x'
    assert "PostgreSQL's -> returns JSON" in str(error) and "use ->> for the value as text" in error.hint
    assert "returns JSON" in str(refusal("SELECT (j::jsonb -> 'a') -> 'b' AS b FROM t", "postgres"))  # the last ->
    error = refusal("SELECT j::jsonb #>> '{arr,0}' FROM t", "postgres")  # an index or a key: PostgreSQL decides
    assert "a type Spark does not have (JSONB)" in str(error)
    error = refusal("SELECT to_char(d, 'YYYY-WW') FROM t", "postgres")
    assert "to_char template 'YYYY-WW' has 'WW'" in str(error) and "Month, Mon, Day" in error.hint
    error = refusal("SELECT to_char(n, '999D99') FROM t", "postgres")  # a number's template: not a date's
    assert "to_char template '999D99' has '9', a digit of a number's template" in str(error)
    error = refusal("SELECT to_char(t, 'HH24:MI SSSS') FROM t", "postgres")  # seconds past midnight, not SS SS
    assert "has 'SSSS'" in str(error)
    error = refusal("SELECT TO_CHAR(d, 'DD MMMM') FROM t", "snowflake")  # the month's name, not MM MM
    assert "has 'MMMM'" in str(error)
    error = refusal("SELECT TO_CHAR(d, 'DD-MON-YYYY') FROM t", "snowflake")
    assert "TO_CHAR format 'DD-MON-YYYY' has 'MON-YYYY'" in str(error) and "MONTHNAME(d)" in error.hint
    error = refusal("SELECT INITCAP(s, '-') FROM t", "bigquery")
    assert "delimiters that leave out the space" in str(error) and "add the space" in error.hint
