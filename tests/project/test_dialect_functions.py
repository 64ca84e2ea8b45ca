"""Functions whose meaning sqlglot's transpiling to Spark changed (``project.sql.dialect_functions``): the SQL
written, and on Spark the values the source dialect returns (PostgreSQL and DuckDB count the days of the week from
Sunday = 0; TO_TIMESTAMP of an epoch keeps its microseconds; DuckDB's TRY_STRPTIME gives NULL for text that does not
match). Found in SQLMesh users' projects: a weekend flag that was true on Saturdays and Mondays, load times that
lost their fraction of a second, a model that did not run."""

from __future__ import annotations

import pytest
import sqlglot

from dagster_sparkmesh.project.sql.spark_support import with_spark_equivalents

SUNDAY, MONDAY, SATURDAY = "DATE '2024-01-07'", "DATE '2024-01-08'", "DATE '2024-01-06'"


def spark_sql(sql: str, dialect: str) -> str:
    return with_spark_equivalents(sqlglot.parse_one(sql, read=dialect), dialect=dialect).sql(dialect="spark")


@pytest.mark.parametrize(
    ("dialect", "sql", "written"),
    [
        ("duckdb", "SELECT TO_TIMESTAMP(x)", "SELECT TIMESTAMP_SECONDS(x)"),
        ("postgres", "SELECT TO_TIMESTAMP(x)", "SELECT TIMESTAMP_SECONDS(x)"),
        ("duckdb", "SELECT EPOCH_MS(x)", "SELECT TIMESTAMP_MILLIS(x)"),
        ("duckdb", "SELECT dayofweek(d), isodow(d), DATE_PART('dow', d), DATE_PART('year', d)",
         "SELECT (DAYOFWEEK(d) - 1), EXTRACT(DAYOFWEEK_ISO FROM d), (DAYOFWEEK(d) - 1), DATE_PART('year', d)"),
        ("postgres", "SELECT EXTRACT(dow FROM d), EXTRACT(isodow FROM d), EXTRACT(year FROM d)",
         "SELECT (DAYOFWEEK(d) - 1), EXTRACT(DAYOFWEEK_ISO FROM d), EXTRACT(YEAR FROM d)"),
        ("snowflake", "SELECT DAYOFWEEK(d)", "SELECT (DAYOFWEEK(d) - 1)"),
        ("trino", "SELECT day_of_week(d), EXTRACT(DOW FROM d)",
         "SELECT EXTRACT(DAYOFWEEK_ISO FROM d), EXTRACT(DAYOFWEEK_ISO FROM d)"),
        ("mysql", "SELECT DAYOFWEEK(d)", "SELECT DAYOFWEEK(d)"),  # Sunday = 1 there too
        ("bigquery", "SELECT EXTRACT(DAYOFWEEK FROM d)", "SELECT EXTRACT(DAYOFWEEK FROM d)"),
        ("duckdb", "SELECT TRY_STRPTIME(s, '%d/%m/%Y')", "SELECT TRY_TO_TIMESTAMP(s, 'd/M/yyyy')"),
        ("spark", "SELECT EXTRACT(DOW FROM d), FROM_UNIXTIME(x)", "SELECT EXTRACT(DOW FROM d), FROM_UNIXTIME(x)"),
        ("postgres", "SELECT CURRENT_DATE - d::date, a - b", "SELECT DATEDIFF(CURRENT_DATE, CAST(d AS DATE)), a - b"),
        ("duckdb", "SELECT CONCAT(lat, '|', lon)",
         "SELECT CONCAT(COALESCE(CAST(lat AS STRING), ''), '|', COALESCE(CAST(lon AS STRING), ''))"),
        ("snowflake", "SELECT CONCAT(lat, lon)", "SELECT CONCAT(lat, lon)"),  # NULL in, NULL out there too
        ("duckdb", "SELECT CONCAT_WS('-', a, b)", "SELECT CONCAT_WS('-', a, b)"),  # skips NULLs in Spark as well
        ("duckdb", "SELECT TRY_CAST(UNNEST(x) AS INT) AS i",
         "SELECT EXPLODE(TRANSFORM(x, sparkmesh_item -> TRY_CAST(sparkmesh_item AS INT))) AS i"),
        ("snowflake", "SELECT TRY_TO_TIMESTAMP(s, 'yyyyMMdd'), TRY_TO_DATE(s, 'yyyymmdd'), TO_DATE(s, 'yyyymmdd')",
         "SELECT TRY_TO_TIMESTAMP(s, 'yyyyMMdd'), CAST(TRY_TO_TIMESTAMP(s, 'yyyyMMdd') AS DATE), TO_DATE(s, 'yyyyMMdd')"),
        ("duckdb", "SELECT * FROM e QUALIFY ROW_NUMBER() OVER (PARTITION BY id ORDER BY v DESC) = 1",
         "SELECT * EXCEPT (_w) FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY v DESC) AS _w FROM e) AS _t "
         "WHERE _w = 1"),
        ("duckdb", "SELECT CAST(UNNEST([1, 2]) AS VARCHAR) AS s",
         "SELECT EXPLODE(TRANSFORM(ARRAY(1, 2), sparkmesh_item -> CAST(sparkmesh_item AS STRING))) AS s"),
    ],
)
def test_the_spark_sql_written(dialect, sql, written):
    assert spark_sql(sql, dialect) == written


def test_spark_returns_what_the_source_dialect_returns(engine):
    days = f"SELECT EXTRACT(dow FROM d) AS dow, EXTRACT(isodow FROM d) AS iso FROM (VALUES ({SUNDAY}), ({MONDAY}), ({SATURDAY})) AS t(d)"
    rows = engine.catalog.query_rows(spark_sql(days, "postgres"))
    assert [tuple(row) for row in rows] == [(0, 7), (1, 1), (6, 6)]
    duckdb = ("SELECT dayofweek(DATE '2024-01-07') AS dow, CAST(TO_TIMESTAMP(1733274321.225736) AS VARCHAR) AS t, "
              "TRY_STRPTIME('17/04/2025', '%d/%m/%Y') AS parsed, TRY_STRPTIME('no date', '%d/%m/%Y') AS unparsed")
    (row,) = engine.catalog.query_rows(spark_sql(duckdb, "duckdb"))
    assert row[0] == 0 and row[1] == "2024-12-04 01:05:21.225736"
    assert str(row[2]) == "2025-04-17 00:00:00" and row[3] is None
    keys = ("SELECT CONCAT(lat, '|', lon) AS k, CONCAT(NULL, 'a') AS n "
            "FROM (SELECT '-87.6298'::DECIMAL(18, 3) AS lat, '0.0001'::DECIMAL(18, 4) AS lon)")
    (row,) = engine.catalog.query_rows(spark_sql(keys, "duckdb"))
    assert tuple(row) == ("-87.630|0.0001", "a")  # DuckDB's (SQLMesh 0.236.4 built this very query)
    # A rewrite inside a rewritten function: the day of the week and the DECIMAL inside CONCATs.
    nested = ("SELECT CONCAT('k', EXTRACT(dow FROM DATE '2024-01-07')) AS k, "
              "CONCAT('a', CONCAT('b', 0.0001::NUMERIC(10, 4))) AS n, CONCAT_WS('-', 'x', NULL, 1.50::NUMERIC(5, 2)) AS w")
    (row,) = engine.catalog.query_rows(spark_sql(nested, "postgres"))
    assert tuple(row) == ("k0", "ab0.0001", "x-1.50")
    assert engine.catalog.query_rows(spark_sql("SELECT weekday(DATE '2024-01-07')", "duckdb"))[0][0] == 0
    parsed = engine.catalog.query_rows(spark_sql(
        "SELECT TRY_TO_TIMESTAMP(s, 'yyyyMMdd') AS t FROM (VALUES ('20240105'), ('garbage')) AS v(s)", "snowflake"))
    assert [str(row[0]) for row in parsed] == ["2024-01-05 00:00:00", "None"]
    latest = ("SELECT * FROM (VALUES (1, 10), (1, 20), (2, 5)) AS e(id, v) "
              "QUALIFY ROW_NUMBER() OVER (PARTITION BY id ORDER BY v DESC) = 1")
    frame = engine.catalog.query_df(spark_sql(latest, "duckdb"))
    assert frame.columns == ["id", "v"] and sorted(tuple(r) for r in frame.collect()) == [(1, 20), (2, 5)]
    calendar = ("SELECT generate_series('2020-01-01'::date, '2020-01-03'::date, '1 day'::interval)::date AS d, "
                "DATE '2024-01-07' - DATE '2024-01-01' AS days")
    rows = engine.catalog.query_rows(spark_sql(calendar, "postgres"))
    assert [(str(row[0]), row[1]) for row in rows] == [("2020-01-01", 6), ("2020-01-02", 6), ("2020-01-03", 6)]


def test_a_function_a_macro_built_by_name_is_read_in_the_models_dialect():
    # A user's surrogate-key macro: exp.func("SHA256", ...) without a dialect stays an unknown SHA256 call, which
    # DuckDB has and Spark spells SHA2(x, 256); a function no dialect knows (a user function) stays as written.
    built = sqlglot.select(sqlglot.exp.func("SHA256", sqlglot.exp.column("x")).as_("k"), sqlglot.exp.func("MY_UDF", "x"))
    assert with_spark_equivalents(built, dialect="duckdb").sql(dialect="spark") == "SELECT SHA2(x, 256) AS k, MY_UDF(x)"


CASTS = ("(VALUES (1, CAST(2.5 AS DOUBLE), CAST(2.5 AS DECIMAL(10, 2)), '-3.5', true), "
         "(2, CAST(3.5 AS DOUBLE), CAST(-2.5 AS DECIMAL(10, 2)), '23.0', false), "
         "(3, CAST(-2.5 AS DOUBLE), CAST(0.49 AS DECIMAL(10, 2)), ' 12 ', NULL)) AS t(id, dbl, num, s, flag)")


def test_a_number_cast_to_an_integer_is_rounded_as_the_dialect_rounds_it(engine):
    # DuckDB (checked) and PostgreSQL round a DOUBLE half to even and a DECIMAL half away from zero; DuckDB reads a
    # string as a number first. Spark truncates: a user's quantities were one short.
    duckdb = f"SELECT id, CAST(dbl AS INT), CAST(num AS INT) AS n, s::INTEGER AS s, CAST(flag AS INT) AS f FROM {CASTS}"
    frame = engine.catalog.query_df(spark_sql(duckdb, "duckdb") + " ORDER BY id")
    assert list(frame.columns) == ["id", "dbl", "n", "s", "f"]  # an unaliased cast keeps its column's name
    assert [tuple(row) for row in frame.collect()] == [(1, 2, 3, -4, 1), (2, 4, -3, 23, 0), (3, -2, 0, 12, None)]
    # BigQuery and Snowflake round both half away from zero.
    bigquery = "SELECT CAST(2.5 AS INT64), CAST(CAST(-3.5 AS FLOAT64) AS INT64), SAFE_CAST('x' AS INT64)"
    assert list(engine.catalog.query_rows(spark_sql(bigquery, "bigquery"))[0]) == [3, -4, None]
    assert spark_sql("SELECT CAST(x AS INT), CAST(COUNT(*) AS BIGINT), CAST('7' AS INT)", "spark") == (
        "SELECT CAST(x AS INT), CAST(COUNT(*) AS BIGINT), CAST('7' AS INT)")
    assert spark_sql("SELECT CAST(COUNT(*) AS BIGINT), CAST('7' AS INT), CAST(1 AS INT)", "duckdb") == (
        "SELECT CAST(COUNT(*) AS BIGINT), CAST('7' AS INT), CAST(1 AS INT)")  # whole numbers by their spelling


def test_a_hexadecimal_string_cast_to_an_integer_is_read_as_duckdb_and_bigquery_read_it(engine):
    # DuckDB 1.5's results (checked): bare 0x/0X hex only, its type's range; a user's SAFE_CAST(text AS INT64) gave
    # NULL for '0x1F' where SQLMesh gave 31. Decimal text keeps its rounding.
    texts = ["0x1F", "0X1f", " 0x1F ", "-0x1F", "0x", "0x7FFFFFFF", "0x80000000", "0x00000000000000000001F",
             "0x8000000000000000", "0x1FFFFFFFFFFFFFFFF", "0x1G", "7.9", " 7 "]
    rows = ", ".join(f"({i}, '{text}')" for i, text in enumerate(texts))
    duckdb = f"SELECT TRY_CAST(s AS INTEGER), TRY_CAST(s AS BIGINT) FROM (VALUES {rows}) AS t(i, s) ORDER BY i"
    assert [tuple(r) for r in engine.catalog.query_rows(spark_sql(duckdb, "duckdb"))] == [
        (31, 31), (31, 31), (None, None), (None, None), (None, None), (2147483647, 2147483647), (None, 2147483648),
        (31, 31), (None, None), (None, None), (None, None), (8, 8), (7, 7)]
    # BigQuery documents a sign ('-0x123' is -291); INT64's range holds -2^63.
    texts = ["0x1F", " -0x1F ", "+0X1f", "-0x8000000000000000", "0x8000000000000000", "0x", "7.9"]
    rows = ", ".join(f"({i}, '{text}')" for i, text in enumerate(texts))
    bigquery = f"SELECT i, SAFE_CAST(s AS INT64) FROM (VALUES {rows}) AS t(i, s) ORDER BY i"
    assert [r[1] for r in engine.catalog.query_rows(spark_sql(bigquery, "bigquery"))] == [
        31, -31, 31, -9223372036854775808, None, None, 8]
    assert spark_sql("SELECT TRY_CAST(s AS INT)", "snowflake") == (  # Snowflake reads no hex
        "SELECT TRY_CAST(ROUND(TRY_CAST(s AS DECIMAL(38, 18))) AS INT) AS s")


def test_greatest_and_least_are_null_where_the_dialect_makes_them_null(engine):
    rows = "(VALUES (1, 10, 3), (2, 7, NULL), (3, NULL, NULL)) AS t(id, a, b)"
    sql = f"SELECT id, GREATEST(a - b, 0), LEAST(a, b) FROM {rows} ORDER BY id"
    assert [tuple(r) for r in engine.catalog.query_rows(spark_sql(sql, "snowflake"))] == [(1, 7, 3), (2, None, None), (3, None, None)]
    assert [tuple(r) for r in engine.catalog.query_rows(spark_sql(sql, "duckdb"))] == [(1, 7, 3), (2, 0, 7), (3, 0, None)]


def test_regexp_replace_replaces_the_first_match_unless_flagged_global_as_duckdb_and_postgres_do(engine):
    # DuckDB's results (checked): a user's `REGEXP_REPLACE(gb, '[^0-9]', '')` turned '5GB' into '5B', which their
    # TRY_CAST then made NULL; Spark replaced every match.
    values = "(VALUES ('5GB'), ('$1,299.00'), ('Apple apple'), (NULL)) AS t(x)"
    sql = (f"SELECT REGEXP_REPLACE(x, '[^0-9]', ''), REGEXP_REPLACE(x, 'a(p)', '<\\1>', 'g'), "
           f"REGEXP_REPLACE(x, 'apple', 'X', 'i') FROM {values}")
    rows = [tuple(row) for row in engine.catalog.query_rows(spark_sql(sql, "duckdb"))]
    assert rows == [("5B", "5GB", "5GB"), ("1,299.00", "$1,299.00", "$1,299.00"),
                    ("pple apple", "Apple <p>ple", "X apple"), (None, None, None)]
    assert [tuple(r) for r in engine.catalog.query_rows(spark_sql(sql, "postgres"))] == rows
    # PostgreSQL's \\& is the whole match, and a $ in the replacement is itself.
    whole = "SELECT REGEXP_REPLACE('Apple apple', 'a(p)', '[\\&$]', 'g')"
    assert engine.catalog.query_rows(spark_sql(whole, "postgres"))[0][0] == "Apple [ap$]ple"


def test_day_and_month_names_are_whole_in_duckdb_and_abbreviated_in_snowflake(engine):
    sql = f"SELECT DAYNAME({SUNDAY}), MONTHNAME({SUNDAY})"
    assert list(engine.catalog.query_rows(spark_sql(sql, "duckdb"))[0]) == ["Sunday", "January"]
    assert list(engine.catalog.query_rows(spark_sql(sql, "snowflake"))[0]) == ["Sun", "Jan"]


def test_a_decimal_without_precision_keeps_the_dialects_digits(engine):
    # PostgreSQL's unconstrained NUMERIC (a user's latitudes became whole degrees); BigQuery's NUMERIC is (38, 9).
    rows = "(VALUES (1, 2.5), (1, 3.25), (1, 2.875)) AS t(g, x)"
    sql = f"SELECT ROUND(AVG(x)::numeric, 2), SUM(x)::NUMERIC, CAST(42.136 AS DECIMAL) FROM {rows} GROUP BY g"
    assert [float(v) for v in engine.catalog.query_rows(spark_sql(sql, "postgres"))[0]] == [2.88, 8.625, 42.136]
    assert spark_sql("SELECT CAST(x AS NUMERIC), CAST(x AS NUMERIC(10, 2))", "bigquery") == (
        "SELECT CAST(x AS DECIMAL(38, 9)), CAST(x AS DECIMAL(10, 2))")
    assert spark_sql("SELECT CAST(x AS DECIMAL)", "duckdb") == "SELECT CAST(x AS DECIMAL(18, 3))"  # sqlglot's, as DuckDB


def test_times_in_a_zone_epochs_and_truncated_numbers_as_their_dialects_compute_them(engine):
    # DuckDB's and BigQuery's results (checked with DuckDB where it has the function): each failed on Spark.
    moment = "TIMESTAMP '2024-03-10 09:30:00.25'"
    duckdb = (f"SELECT EXTRACT(EPOCH FROM {moment}), epoch({moment}), TRUNC(-3.789, 1), TRUNC(3.789, 2), "
              f"current_date('America/New_York') = CAST(CONVERT_TIMEZONE('America/New_York', CURRENT_TIMESTAMP()) AS DATE)")
    assert [float(v) for v in engine.catalog.query_rows(spark_sql(duckdb, "duckdb"))[0]] == [
        1710063000.25, 1710063000.25, -3.7, 3.78, 1.0]
    assert engine.catalog.query_rows(spark_sql("SELECT EXTRACT(EPOCH FROM DATE '2024-01-02')", "postgres"))[0][0] == 1704153600
    bigquery = (f"SELECT CAST(DATETIME({moment}, 'America/Los_Angeles') AS STRING), "
                f"DATE(TIMESTAMP '2024-01-01 03:00:00', 'America/Los_Angeles'), "
                f"CAST(TIMESTAMP(DATETIME '2024-01-01 00:00:00', 'America/Los_Angeles') AS STRING)")
    row = engine.catalog.query_rows(spark_sql(bigquery, "bigquery"))[0]
    assert [str(v) for v in row] == ["2024-03-10 01:30:00.25", "2023-12-31", "2024-01-01 08:00:00"]


def test_try_cast_of_text_to_a_date_is_null_where_duckdb_reads_no_date(engine):
    # DuckDB's results (checked): a user's TRY_CAST over CSV text was there to null out '2023' and '2023-01'.
    texts = ["2023-01-05", "2023-1-5", "2023-01-05 10:00:00", " 2023-01-05 ", "2023-02-30", "2023", "2023-01", "2023-01-05 "]
    values = ", ".join(f"({i}, '{t}')" for i, t in enumerate(texts))
    sql = f"SELECT CAST(TRY_CAST(s AS DATE) AS STRING), CAST(TRY_CAST(s AS TIMESTAMP) AS STRING) FROM (VALUES {values}) AS t(i, s) ORDER BY i"
    rows = [tuple(r) for r in engine.catalog.query_rows(spark_sql(sql, "duckdb"))]
    assert rows == [("2023-01-05", "2023-01-05 00:00:00"), ("2023-01-05", "2023-01-05 00:00:00"),
                    ("2023-01-05", "2023-01-05 10:00:00"), ("2023-01-05", None), (None, None), (None, None), (None, None),
                    ("2023-01-05", None)]


def test_the_length_of_a_list_and_a_continuous_quantile_as_duckdb_computes_them(engine):
    # DuckDB's results (checked): both stopped the backfill on Spark.
    rows = "(VALUES ('a-b-c', 1.0), ('d', 2.0), ('e-f', 4.0), ('g', 10.0)) AS t(s, x)"
    sql = (f"SELECT LEN(STRING_SPLIT(s, '-')), LEN(s), QUANTILE_CONT(x, 0.25) OVER (), "
           f"(SELECT QUANTILE_CONT(x, 0.5) FROM {rows}) FROM {rows} ORDER BY s")
    found = [tuple(float(v) for v in row) for row in engine.catalog.query_rows(spark_sql(sql, "duckdb"))]
    assert found == [(3, 5, 1.75, 3.0), (1, 1, 1.75, 3.0), (2, 3, 1.75, 3.0), (1, 1, 1.75, 3.0)]


def test_finite_and_infinite_numbers_and_the_epoch_of_a_duration_as_duckdb_computes_them(engine):
    # DuckDB's results (checked): ISFINITE is no Spark function, and the epoch of a duration cast an interval to a
    # timestamp; both stopped the backfill (a user's taxi trips: minutes between pickup and drop-off).
    numbers = "SELECT x, ISFINITE(x), ISINF(x) FROM (VALUES (1.5::DOUBLE), ('inf'::DOUBLE), ('nan'::DOUBLE), (NULL)) AS t(x)"
    assert [tuple(row[1:]) for row in engine.catalog.query_rows(spark_sql(numbers, "duckdb"))] == [
        (True, False), (False, True), (False, False), (None, None)
    ]
    trips = ("(VALUES (TIMESTAMP '2025-01-01 23:50:00', TIMESTAMP '2025-01-02 00:10:30.5')) AS t(a, b)")
    duckdb = f"SELECT EPOCH(b - a) / 60.0, EPOCH(b - INTERVAL 1 DAY) FROM {trips}"
    postgres = f"SELECT EXTRACT(EPOCH FROM b - a) / 60.0, EXTRACT(EPOCH FROM (b - a)) FROM {trips}"
    assert [round(float(v), 6) for v in engine.catalog.query_rows(spark_sql(duckdb, "duckdb"))[0]] == [20.508333, 1735690230.5]
    assert [round(float(v), 6) for v in engine.catalog.query_rows(spark_sql(postgres, "postgres"))[0]] == [20.508333, 1230.5]


@pytest.mark.parametrize(
    ("dialect", "sql", "written"),
    [
        ("duckdb", r"SELECT x LIKE 'a\_%', x NOT ILIKE 'A\%'", r"SELECT x LIKE 'a\\\\_%', x NOT ILIKE 'A\\\\%'"),
        ("duckdb", "SELECT x LIKE p", r"SELECT x LIKE REPLACE(p, '\\', '\\\\')"),
        ("duckdb", r"SELECT x LIKE ANY ('a\_%', 'b%')", r"SELECT x LIKE ANY ('a\\\\_%', 'b%')"),
        ("trino", r"SELECT x LIKE 'a\_%'", r"SELECT x LIKE 'a\\\\_%'"),
        ("duckdb", r"SELECT x LIKE 'a!_%' ESCAPE '!', x LIKE 'a%'", r"SELECT x LIKE 'a!_%' ESCAPE '!', x LIKE 'a%'"),
        ("postgres", r"SELECT x LIKE 'a\_%'", r"SELECT x LIKE 'a\\_%'"),  # backslash escapes there too
        ("bigquery", r"SELECT x LIKE 'a\\_%'", r"SELECT x LIKE 'a\\_%'"),
    ],
)
def test_a_backslash_in_a_like_pattern_is_literal_where_the_dialect_has_no_default_escape(dialect, sql, written):
    assert spark_sql(sql, dialect) == written


def test_like_patterns_with_backslashes_match_what_duckdb_matches(engine):
    # DuckDB 1.x's rows (checked, and SQLMesh 0.236.4's on the same model): Spark took the backslash for its LIKE's
    # escape, so 'a\_%' matched a_b, and refused 'a\b' ("the escape character is not allowed to precede 'b'").
    sql = (r"SELECT x, x LIKE 'a\_%', x NOT LIKE 'a\%', x ILIKE 'A\B', x LIKE p, x LIKE 'a!_%' ESCAPE '!' "
           r"FROM (VALUES ('a_b', 'a\_%'), ('a\b', 'a\b'), ('a%', 'a\%')) AS t(x, p) ORDER BY x")
    assert [tuple(row) for row in engine.catalog.query_rows(spark_sql(sql, "duckdb"))] == [
        ("a%", False, True, False, False, False),
        ("a\\b", True, False, True, True, False),
        ("a_b", False, True, False, False, True),
    ]


@pytest.mark.parametrize(
    ("sql", "written"),
    [
        ("SELECT AVG(x) AS a, AVG(x) OVER (PARTITION BY y) AS w, AVG(x) FILTER (WHERE z) AS f",
         "SELECT CAST(AVG(x) AS DOUBLE) AS a, CAST(AVG(x) OVER (PARTITION BY y) AS DOUBLE) AS w, "
         "CAST(AVG(x) FILTER(WHERE z) AS DOUBLE) AS f"),
        # (A divisor that may be zero is guarded too: test_duckdb_functions.py.)
        ("SELECT a / 3 AS q, a / 3 / 4 AS r", "SELECT CAST(a AS DOUBLE) / 3 AS q, CAST(a AS DOUBLE) / 3 / 4 AS r"),
        ("SELECT ROUND(AVG(x), 2) AS r, ROUND(x, 2) AS kept, ROUND(x::DOUBLE, -1) AS tens, ROUND(a / 3) AS whole",
         "SELECT (ROUND(CAST(AVG(x) AS DOUBLE) * POWER(10, 2)) / POWER(10, 2)) AS r, ROUND(x, 2) AS kept, "
         "(ROUND(CAST(x AS DOUBLE) / POWER(10, 1)) * POWER(10, 1)) AS tens, ROUND(CAST(a AS DOUBLE) / 3) AS whole"),
        ("SELECT AVG(x), a / 3", 'SELECT CAST(AVG(x) AS DOUBLE) AS `AVG(x)`, CAST(a AS DOUBLE) / 3 AS `(a / 3)`'),
    ],
)
def test_duckdbs_averages_and_divisions_are_doubles_and_its_doubles_round_as_there(sql, written):
    assert spark_sql(sql, "duckdb") == written
    assert spark_sql(sql, "postgres") == sqlglot.parse_one(sql, read="postgres").sql(dialect="spark")  # DuckDB's only


def test_averages_divisions_and_rounded_doubles_of_duckdb_give_its_values_and_types(engine):
    # DuckDB 1.x's values and types (checked, and SQLMesh 0.236.4's table of the same model): every column a DOUBLE;
    # on Spark the averages and divisions of decimals were DECIMAL, and 1.005 and 0.285 rounded up (1.01, 0.29).
    sql = ("SELECT ROUND(AVG(d), 2) AS a, ROUND(ANY_VALUE(d) / 1, 2) AS b, ROUND(1.005::DOUBLE, 2) AS c, "
           "ROUND(AVG(i), 2) AS e, ROUND(ANY_VALUE(0.285::DOUBLE), 2) AS f, AVG(d) AS g, ANY_VALUE(d) / ANY_VALUE(d2) AS h, "
           "ROUND(2.675::DOUBLE, 2) AS k, ROUND(-1.005::DOUBLE, 2) AS m, ROUND(15.0::DOUBLE, -1) AS n "
           "FROM (SELECT 1.005::DECIMAL(10, 3) AS d, 3.0::DECIMAL(10, 1) AS d2, 1 AS i "
           "UNION ALL SELECT 1.005::DECIMAL(10, 3), 3.0, 2)")
    frame = engine.spark.sql(spark_sql(sql, "duckdb"))
    assert {field.dataType.simpleString() for field in frame.schema.fields} == {"double"}
    assert tuple(frame.collect()[0]) == (1.0, 1.0, 1.0, 1.5, 0.28, 1.005, 0.33499999999999996, 2.68, -1.0, 20.0)


def test_percentiles_within_group_are_exact_as_the_dialects_compute_them(engine):
    # DuckDB's values (checked; PostgreSQL's are the same): sqlglot wrote Spark's PERCENTILE_APPROX, which neither
    # interpolates nor heeds DESC (2.0 for each), and Spark refused DuckDB's QUANTILE_DISC(x, p). The SQL written
    # must survive sqlglot's round trip (Spark's own WITHIN GROUP form turns into PERCENTILE_APPROX on the next read).
    rows = "FROM (VALUES (1), (2), (3), (4), (NULL)) AS t(x)"
    cases = [
        ("postgres", "SELECT PERCENTILE_CONT(0.6) WITHIN GROUP (ORDER BY x DESC), PERCENTILE_DISC(0.6) WITHIN GROUP "
                     f"(ORDER BY x), PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY x) {rows}", (2.2, 3, 2.5)),
        ("duckdb", f"SELECT QUANTILE_DISC(x, 0.6), QUANTILE_DISC(x, 0.26), QUANTILE_CONT(x, 0.5) {rows}", (3, 2, 2.5)),
        ("bigquery", f"SELECT PERCENTILE_DISC(x, 0.6) OVER (), PERCENTILE_CONT(x, 0.5) OVER () {rows} LIMIT 1", (3, 2.5)),
    ]
    for dialect, sql, expected in cases:
        written = sqlglot.transpile(spark_sql(sql, dialect), read="spark", write="spark")[0]
        assert written.count("PERCENTILE_APPROX(") == written.count(", 1000000)")  # discrete: exact at this accuracy
        assert tuple(engine.catalog.query_rows(written)[0]) == expected, dialect
