"""An alias of a SELECT list referenced in a window of the same list (``project.sql.lateral_aliases``): DuckDB,
Snowflake and Redshift resolve it, Spark refuses it (``UNSUPPORTED_FEATURE.LATERAL_COLUMN_ALIAS_IN_WINDOW``), so
the model's backfill failed where SQLMesh on DuckDB computes it. The expected rows are DuckDB's own (checked with
DuckDB 1.x in SQLMesh 0.236.4's environment), as is the rule that a source column of the same name wins over the
alias."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
import sqlglot

from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.sql.spark_support import with_spark_equivalents

PRICES = ("(VALUES (DATE '2024-01-01', 100.0), (DATE '2024-01-02', 102.0), (DATE '2024-01-03', 99.0), "
          "(DATE '2024-01-04', 105.0)) AS p(d, close)")
# The query of the repro model (Pshah227/sqlmesh-spy-pipeline's spy_transformed, cut down).
RETURNS = (f"WITH prices AS (SELECT d, CAST(close AS DOUBLE) AS close FROM {PRICES}), "
           "base AS (SELECT d, close, LAG(close) OVER (ORDER BY d) AS prev_close FROM prices) "
           "SELECT *, (close - prev_close) / prev_close * 100.0 AS ret_pct, "
           "STDDEV(ret_pct) OVER (ORDER BY d ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS vol_3d "
           "FROM base WHERE prev_close IS NOT NULL ORDER BY d")


def spark_sql(sql: str, dialect: str = "duckdb") -> str:
    return with_spark_equivalents(sqlglot.parse_one(sql, read=dialect), dialect=dialect).sql(dialect="spark")


def test_an_alias_in_a_window_functions_argument_is_written_out():
    assert spark_sql("SELECT d, (close - prev) / prev * 100.0 AS ret_pct, "
                     "STDDEV(ret_pct) OVER (ORDER BY d) AS vol FROM (SELECT 1 AS d, 2 AS close, 3 AS prev) AS t") == (
        f"SELECT d, {RETURN} * 100.0 AS ret_pct, STDDEV(({RETURN} * 100.0)) "
        "OVER (ORDER BY d NULLS LAST) AS vol FROM (SELECT 1 AS d, 2 AS close, 3 AS prev) AS t")


# DuckDB's division, which gives inf or NaN for a zero divisor (test_duckdb_functions.py).
RETURN = ("CASE WHEN prev = 0 THEN CAST((close - prev) AS DOUBLE) * POWER(prev, -1) "
          "ELSE CAST((close - prev) AS DOUBLE) / prev END")


def test_an_alias_in_partition_by_and_order_by_is_written_out():
    assert spark_sql("WITH p AS (SELECT 1 AS d, 2 AS close) SELECT d, close > 100 AS up, -d AS back, "
                     "ROW_NUMBER() OVER (PARTITION BY up ORDER BY back) AS rn FROM p") == (
        "WITH p AS (SELECT 1 AS d, 2 AS close) SELECT d, close > 100 AS up, -d AS back, "
        "ROW_NUMBER() OVER (PARTITION BY (close > 100) ORDER BY (-d) NULLS LAST) AS rn FROM p")


def test_an_alias_made_of_earlier_aliases_is_written_out_through_them():
    assert spark_sql("SELECT d, close AS a, a * 2 AS b, b + 1 AS c, SUM(c) OVER (ORDER BY d) AS s "
                     "FROM (SELECT 1 AS d, 2 AS close) AS t") == (
        "SELECT d, close AS a, a * 2 AS b, b + 1 AS c, SUM(((close * 2) + 1)) OVER (ORDER BY d NULLS LAST) AS s "
        "FROM (SELECT 1 AS d, 2 AS close) AS t")


def test_a_name_that_is_a_source_column_stays_the_source_column():
    # DuckDB: the source's d wins over the alias d (``SUM(d)`` sums the source's values); so does a qualified name.
    assert spark_sql("SELECT x * 2 AS d, x AS y, SUM(d) OVER (ORDER BY t.y) AS s FROM (SELECT 1 AS d, 2 AS x) AS t") == (
        "SELECT x * 2 AS d, x AS y, SUM(d) OVER (ORDER BY t.y NULLS LAST) AS s FROM (SELECT 1 AS d, 2 AS x) AS t")


@pytest.mark.parametrize(
    "sql",
    [
        # a table whose columns are not known while the query alone is read: any name may be its column
        "SELECT x * 2 AS y, SUM(y) OVER () AS s FROM db.t",
        "WITH c AS (SELECT * FROM db.t) SELECT x * 2 AS y, SUM(y) OVER () AS s FROM c",
        # an alias defined after the window (DuckDB refuses it), and one holding a subquery (DuckDB refuses it)
        "SELECT SUM(y) OVER () AS s, x * 2 AS y FROM (SELECT 1 AS x) AS t",
        "SELECT (SELECT 1) AS y, SUM(y) OVER () AS s FROM (SELECT 1 AS x) AS t",
    ],
)
def test_a_reference_that_cannot_be_told_an_alias_is_left_as_written(sql):
    assert spark_sql(sql) == sqlglot.parse_one(sql, read="duckdb").sql(dialect="spark")


def test_a_subquerys_select_list_is_its_own_scope():
    assert spark_sql("SELECT x AS y, (SELECT SUM(y) OVER () FROM (SELECT 5 AS z) AS u) AS s "
                     "FROM (SELECT 1 AS x) AS t") == (
        "SELECT x AS y, (SELECT SUM(y) OVER () FROM (SELECT 5 AS z) AS u) AS s FROM (SELECT 1 AS x) AS t")
    assert spark_sql("SELECT s FROM (SELECT x AS y, SUM(y) OVER () AS s FROM (SELECT 1 AS x) AS t) AS q") == (
        "SELECT s FROM (SELECT x AS y, SUM(x) OVER () AS s FROM (SELECT 1 AS x) AS t) AS q")


# ids without "postgres": the suite's runs deselect PostgreSQL state-store tests by that word
@pytest.mark.parametrize("dialect", ["postgres", "spark", "trino"], ids=["pg", "spark", "trino"])
def test_a_dialect_without_lateral_aliases_in_windows_is_left_alone(dialect):
    sql = "SELECT x * 2 AS y, SUM(y) OVER () AS s FROM (SELECT 1 AS x) AS t"
    assert spark_sql(sql, dialect) == sqlglot.parse_one(sql, read=dialect).sql(dialect="spark")


def test_a_window_over_a_models_columns_is_written_out_once_the_parents_are_loaded(tmp_path: Path):
    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
    (tmp_path / "models" / "prices.sql").write_text(
        "MODEL (name spy.prices, kind FULL, columns (d DATE, close DOUBLE));\nSELECT DATE '2024-01-01' AS d, 1.0 AS close")
    (tmp_path / "models" / "ranked.sql").write_text(
        "MODEL (name spy.ranked, kind FULL);\nSELECT d, close > 100 AS up, up AS up2, "
        "ROW_NUMBER() OVER (PARTITION BY up2 ORDER BY d) AS rn, close * 2 AS d, SUM(d) OVER (ORDER BY close) AS s "
        "FROM spy.prices")
    (tmp_path / "models" / "unknown.sql").write_text(
        "MODEL (name spy.unknown, kind FULL);\nSELECT x * 2 AS y, SUM(y) OVER () AS s FROM raw.events")
    models = load_project(tmp_path).models
    assert models["spy.ranked"].query == (
        "SELECT d, close > 100 AS up, up AS up2, ROW_NUMBER() OVER (PARTITION BY (close > 100) ORDER BY d NULLS LAST) "
        "AS rn, close * 2 AS d, SUM(d) OVER (ORDER BY close NULLS LAST) AS s FROM spy.prices")
    assert models["spy.unknown"].query == "SELECT x * 2 AS y, SUM(y) OVER () AS s FROM raw.events"



def test_a_unit_test_reading_its_model_with_its_own_vars_gets_the_window_aliases_written_too(tmp_path: Path):
    (tmp_path / "models").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\nvariables:\n  limit: 100\n")
    (tmp_path / "models" / "prices.sql").write_text(
        "MODEL (name spy.prices, kind FULL, columns (d DATE, close DOUBLE));\nSELECT DATE '2024-01-01' AS d, 1.0 AS close")
    (tmp_path / "models" / "ranked.sql").write_text(
        "MODEL (name spy.ranked, kind FULL);\n"
        "SELECT d, close > @limit AS up, ROW_NUMBER() OVER (PARTITION BY up ORDER BY d) AS rn FROM spy.prices")
    (tmp_path / "tests" / "test_ranked.yaml").write_text(
        "test_ranked:\n  model: spy.ranked\n  vars:\n    limit: 5\n  inputs:\n    spy.prices:\n"
        "      - {d: 2024-01-01, close: 7.0}\n  outputs:\n    query:\n      - {d: 2024-01-01, up: true, rn: 1}\n")
    project = load_project(tmp_path, use_cache=False)
    # The test's own read of the model (limit 5) is written out over spy.prices' columns, as the model's is.
    assert project.unit_tests[0].model_query == (
        "SELECT d, close > 5 AS up, ROW_NUMBER() OVER (PARTITION BY (close > 5) ORDER BY d NULLS LAST) AS rn "
        "FROM spy.prices")
    assert "PARTITION BY (close > 100)" in project.models["spy.ranked"].query

def test_the_repro_models_rows_are_duckdbs_on_spark(engine):
    rows = [tuple(row) for row in engine.catalog.query_rows(spark_sql(RETURNS))]
    assert [row[:2] for row in rows] == [(date(2024, 1, 2), 102.0), (date(2024, 1, 3), 99.0), (date(2024, 1, 4), 105.0)]
    assert [row[4] for row in rows] == [None, pytest.approx(3.4939393893923523), pytest.approx(4.5080637978301406)]


def test_partitioned_by_an_alias_and_summing_a_shadowed_name_gives_duckdbs_rows_on_spark(engine):
    sql = ("SELECT d, close > 100 AS up, up AS up2, ROW_NUMBER() OVER (PARTITION BY up2 ORDER BY d) AS rn, "
           "close * 2 AS d, SUM(d) OVER (ORDER BY close) AS d_sum "
           "FROM (VALUES (1, 100.0), (2, 102.0), (3, 99.0), (4, 105.0)) AS p(d, close) ORDER BY 1")
    rows = [(row[0], row[1], row[3], float(row[4]), row[5]) for row in engine.catalog.query_rows(spark_sql(sql))]
    assert rows == [(1, False, 1, 200.0, 4), (2, True, 1, 204.0, 6), (3, False, 2, 198.0, 3), (4, True, 2, 210.0, 10)]
