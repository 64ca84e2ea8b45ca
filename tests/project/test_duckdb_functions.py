"""DuckDB idioms that Spark refused or answered otherwise (``project.sql.duckdb_functions``): the SQL written, and on
Spark the values DuckDB 1.5.6 returns (each expected value below is what DuckDB returned for the same query). Found by
running the same projects on SQLMesh 0.236.4 (DuckDB) and here: a ratio with a zero divisor and the last part of a
split stopped the backfill."""

from __future__ import annotations

import math
from datetime import datetime

import pytest
import sqlglot

from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import render_query
from dagster_sparkmesh.project.sql.spark_support import with_spark_equivalents

SPLIT = "SPLIT(s, CONCAT('\\\\Q', ',', '\\\\E'))"


def spark_sql(sql: str, dialect: str = "duckdb") -> str:
    return with_spark_equivalents(sqlglot.parse_one(sql, read=dialect), dialect=dialect).sql(dialect="spark")


def rows(engine, sql: str) -> list[tuple]:
    return [tuple(row) for row in engine.catalog.query_rows(spark_sql(sql))]


@pytest.mark.parametrize(
    ("sql", "written"),
    [
        ("SELECT x / y AS q",
         "SELECT CASE WHEN y = 0 THEN CAST(x AS DOUBLE) * POWER(y, -1) ELSE CAST(x AS DOUBLE) / y END AS q"),
        ("SELECT x::DOUBLE / y",  # an unaliased projection keeps the name Spark gives sqlglot's division
         "SELECT CASE WHEN y = 0 THEN CAST(x AS DOUBLE) * POWER(y, -1) ELSE CAST(x AS DOUBLE) / y END "
         "AS `(CAST(x AS DOUBLE) / y)`"),
        ("SELECT x / 2 AS q, x % 3 AS r, x // 4 AS d", "SELECT CAST(x AS DOUBLE) / 2 AS q, x % 3 AS r, x DIV 4 AS d"),
        ("SELECT x // y AS d, x % y AS r", "SELECT x DIV NULLIF(y, 0) AS d, x % NULLIF(y, 0) AS r"),
        ("SELECT x::DOUBLE % y AS r",
         "SELECT CASE WHEN y = 0 THEN CAST(x AS DOUBLE) * CAST('NaN' AS DOUBLE) ELSE CAST(x AS DOUBLE) % y END AS r"),
        ("SELECT strlen(s), yearweek(d)",
         "SELECT OCTET_LENGTH(s), CAST(EXTRACT(YEAROFWEEK FROM d) * 100 + EXTRACT(WEEK FROM d) AS BIGINT)"),
        ("SELECT string_split(s, ',')[-1], string_split(s, ',')[1], string_split(s, ',')[0], string_split(s, ',')[i]",
         f"SELECT TRY_ELEMENT_AT({SPLIT}, -1), TRY_ELEMENT_AT({SPLIT}, 1), TRY_ELEMENT_AT({SPLIT}, CAST(NULL AS INT)), "
         f"TRY_ELEMENT_AT({SPLIT}, CAST(NULLIF(i, 0) AS INT))"),
        # A column that may be a map: its key looked up as DuckDB does; 0 and a column index left as sqlglot writes them.
        ("SELECT l[-1], l[2], l[0], l[i], m['k'], l[1:2]",
         "SELECT TRY_ELEMENT_AT(l, -1), TRY_ELEMENT_AT(l, 2), l[-1], l[i], m['k'], l[1:2]"),
        ("SELECT timezone('UTC', now()), timezone('UTC', ts::TIMESTAMP), timezone('UTC', ts)",
         "SELECT CONVERT_TIMEZONE('UTC', NOW()), TO_UTC_TIMESTAMP(CAST(ts AS TIMESTAMP_NTZ), 'UTC'), TIMEZONE('UTC', ts)"),
        ("SELECT epoch_ms(ts::TIMESTAMP), epoch_ms(x)",
         "SELECT (UNIX_MICROS(CAST(CAST(ts AS TIMESTAMP_NTZ) AS TIMESTAMP)) DIV 1000), TIMESTAMP_MILLIS(x)"),
    ],
)
def test_the_spark_sql_written(sql, written):
    assert spark_sql(sql) == written


@pytest.mark.parametrize("dialect", ["postgres", "snowflake", "bigquery", "spark"])
def test_other_dialects_are_written_as_before(dialect):
    sql = "SELECT x / y, x % y, l[1], STRLEN(s), YEARWEEK(d)"
    assert spark_sql(sql, dialect) == sqlglot.transpile(sql, read=dialect, write="spark")[0]


def test_a_zero_divisor_gives_duckdbs_infinities_nan_and_nulls(engine):
    # DuckDB: x / y is a DOUBLE (inf, -inf, NaN by zero), x // y and x % y INTEGERs (NULL by zero); Spark stopped.
    values = "(VALUES (10, 0), (-10, 0), (0, 0), (NULL, 0), (7, 2), (-7, 2), (7, -2)) AS t(x, y)"
    frame = engine.spark.sql(spark_sql(f"SELECT x / y AS q, x // y AS d, x % y AS r FROM {values}"))
    assert [field.dataType.simpleString() for field in frame.schema.fields] == ["double", "bigint", "int"]
    found = [tuple(row) for row in frame.collect()]
    assert [row[1:] for row in found] == [(None, None)] * 4 + [(3, 1), (-3, -1), (-3, 1)]
    assert [row[0] for row in found[:2] + found[3:]] == [math.inf, -math.inf, None, 3.5, -3.5, -3.5]
    assert math.isnan(found[2][0])


def test_a_zero_divisor_of_literals_decimals_and_doubles_as_duckdb_divides(engine):
    literals = ("SELECT 10 / 0, -10 / 0, 10.0 / 0, 10::DECIMAL(10, 2) / 0, -10.5::DECIMAL(10, 2) / 0::DECIMAL(5, 1), "
                "10::DOUBLE / 0, 10 / CAST('-0.0' AS DOUBLE), 'inf'::DOUBLE / 0, 10 / NULL::INT")
    assert rows(engine, literals) == [(math.inf, -math.inf, math.inf, math.inf, -math.inf, math.inf, -math.inf,
                                       math.inf, None)]
    (nans,) = rows(engine, "SELECT 0 / 0, 'nan'::DOUBLE / 0, 10::DOUBLE % 0, 0::DOUBLE % 0")
    assert all(math.isnan(value) for value in nans)
    assert rows(engine, "SELECT NULL::DOUBLE % 0, 7.5::DOUBLE % 2, 10.5 % 0, -7.5 % 2, 10 // 0, NULL // 0") == [
        (None, 1.5, None, -1.5, None, None)]
    # A quotient by zero divided again, and rounded: DuckDB's inf, -inf (its ROUND of inf is inf).
    nested = "SELECT a / b / c, ROUND(a / b, 2) FROM (VALUES (1, 0, 0), (1, 0, -2), (2, 3, 1)) AS t(a, b, c)"
    assert rows(engine, nested) == [(math.inf, math.inf), (-math.inf, math.inf), (2 / 3, 0.67)]


def test_strlen_counts_bytes_and_yearweek_is_the_iso_year_and_week(engine):
    texts = "SELECT strlen('héllo'), length('héllo'), strlen('日本'), strlen(''), strlen(NULL)"
    assert rows(engine, texts) == [(6, 5, 6, 0, None)]
    days = ("SELECT yearweek(DATE '2020-12-31'), yearweek(DATE '2021-01-03'), yearweek(DATE '2024-12-30'), "
            "yearweek(DATE '2024-06-15'), yearweek(TIMESTAMP '2021-01-03 10:00'), yearweek(DATE '2021-01-04'), "
            "yearweek(DATE '2027-01-01'), yearweek(NULL::DATE)")
    frame = engine.spark.sql(spark_sql(days))
    assert {field.dataType.simpleString() for field in frame.schema.fields} == {"bigint"}
    assert tuple(frame.collect()[0]) == (202053, 202053, 202501, 202424, 202053, 202101, 202653, None)


def test_an_element_of_a_list_by_duckdbs_index(engine):
    parts = ("SELECT s, string_split(s, ',')[-1], string_split(s, ',')[1], string_split(s, ',')[0], "
             "string_split(s, ',')[2] FROM (VALUES ('a,b,c'), ('hello world'), (''), (NULL)) AS t(s)")
    assert rows(engine, parts) == [("a,b,c", "c", "a", None, "b"), ("hello world", "hello world", "hello world", None, None),
                                   ("", "", "", None, None), (None, None, None, None, None)]
    edges = "SELECT l[-1], l[1], l[-2], l[5], l[-5], l[3], l[-3] FROM (SELECT string_split('a,b,c', ',') AS l)"
    assert rows(engine, edges) == [("c", "a", "b", None, None, "c", "a")]
    by_column = ("SELECT i, string_split('a,b,c', ',')[i] "
                 "FROM (VALUES (-4), (-3), (-1), (0), (1), (3::BIGINT), (4), (NULL)) AS t(i)")
    assert rows(engine, by_column) == [(-4, None), (-3, "a"), (-1, "c"), (0, None), (1, "a"), (3, "c"), (4, None),
                                       (None, None)]


def test_timezone_and_epoch_ms_of_moments_as_duckdb_computes_them(engine):
    # The session's time zone is UTC, as DuckDB's was: a naive wall clock in New York is an instant, an instant's
    # wall clock in New York is naive.
    zones = ("SELECT CAST(timezone('America/New_York', TIMESTAMP '2024-07-01 12:00:00') AS VARCHAR), "
             "CAST(timezone('America/New_York', TIMESTAMPTZ '2024-07-01 12:00:00+00') AS VARCHAR), "
             "CAST(timezone('America/New_York', TIMESTAMP '2024-01-15 12:00:00') AS VARCHAR)")
    # (DuckDB prints the instants with their offset, '2024-07-01 16:00:00+00'.)
    assert rows(engine, zones) == [("2024-07-01 16:00:00", "2024-07-01 08:00:00", "2024-01-15 17:00:00")]
    epochs = ("SELECT epoch_ms(TIMESTAMP '2024-01-01 12:34:56.789123'), epoch_ms(TIMESTAMP '1969-12-31 23:59:59.9995'), "
              "epoch_ms(DATE '2024-01-01'), epoch_ms(TIMESTAMPTZ '2024-01-01 00:00:00+01'), "
              "CAST(epoch_ms(1704112496789) AS VARCHAR)")
    frame = engine.spark.sql(spark_sql(epochs))
    assert [field.dataType.simpleString() for field in frame.schema.fields[:4]] == ["bigint"] * 4
    assert tuple(frame.collect()[0]) == (1704112496789, 0, 1704067200000, 1704063600000, "2024-01-01 12:34:56.789")


def test_epoch_ms_and_timezone_of_columns_are_written_by_their_types_once_the_parents_are_loaded(
        engine, schema, tmp_path):
    # DuckDB: epoch_ms of a TIMESTAMP or DATE column is its milliseconds (1704112496789, 1704067200000), of a BIGINT
    # column the timestamp (2024-01-01 12:34:56.789); timezone('America/New_York', ...) of a TIMESTAMP column at
    # 12:00 is the instant 16:00 UTC ('2024-07-01 16:00:00+00'), of a TIMESTAMPTZ column at 12:00 UTC the wall clock
    # 08:00.
    folder = tmp_path / "p"
    files = {
        "config.yaml": "model_defaults:\n  dialect: duckdb\n  start: '2024-01-01'\n",
        "models/src.sql": "MODEL (name s.src, kind FULL);\nSELECT TIMESTAMP '2024-01-01 12:34:56.789123' AS ts, "
                          "DATE '2024-01-01' AS d, 1704112496789::BIGINT AS n, TIMESTAMP '2024-07-01 12:00:00' AS "
                          "naive, TIMESTAMPTZ '2024-07-01 12:00:00+00' AS zoned\n",
        "models/ms.sql": "MODEL (name s.ms, kind FULL);\n"
                         "SELECT epoch_ms(ts) AS t_ms, epoch_ms(d) AS d_ms, epoch_ms(n)::VARCHAR AS n_ts, "
                         "timezone('America/New_York', naive)::VARCHAR AS instant, "
                         "timezone('America/New_York', zoned)::VARCHAR AS wall FROM s.src\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    model = load_project(folder, use_cache=False).models["s.ms"]
    assert model.query == (
        "SELECT (UNIX_MICROS(CAST(ts AS TIMESTAMP)) DIV 1000) AS t_ms, (UNIX_MICROS(CAST(d AS TIMESTAMP)) DIV 1000) "
        "AS d_ms, CAST(TIMESTAMP_MILLIS(n) AS STRING) AS n_ts, CAST(TO_UTC_TIMESTAMP(naive, 'America/New_York') AS "
        "STRING) AS instant, CAST(CONVERT_TIMEZONE('America/New_York', zoned) AS STRING) AS wall FROM s.src")
    engine.catalog.execute(f"CREATE TABLE {schema}.src AS SELECT TIMESTAMP_NTZ '2024-01-01 12:34:56.789123' AS ts, "
                           "DATE '2024-01-01' AS d, 1704112496789L AS n, TIMESTAMP_NTZ '2024-07-01 12:00:00' AS naive, "
                           "TIMESTAMP '2024-07-01 12:00:00' AS zoned")
    sql = render_query(model, start=datetime(2024, 1, 1), end=datetime(2024, 1, 2),
                       execution_time=datetime(2024, 1, 2), table_for={"s.src": f"{schema}.src"})
    assert [tuple(row) for row in engine.catalog.query_rows(sql)] == [
        (1704112496789, 1704067200000, "2024-01-01 12:34:56.789", "2024-07-01 16:00:00", "2024-07-01 08:00:00")]
