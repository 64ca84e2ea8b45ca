"""Operations written for Spark by their operands' types (``project.sql.typed_operands``), known once the parents are
loaded. Integer division in dialects that divide two integers into an integer: PostgreSQL's ``7 / 2`` is 3 and
``-7 / 2`` is -3, where Spark's ``/`` gave 3.5 and -3.5; written as SQLMesh renders such a model for Spark
(``CAST(a / b AS BIGINT)``, which truncates as PostgreSQL does). DuckDB's ``ROUND(x, n)`` of a DOUBLE column, which
rounds the double ``x * 10^n`` (``ROUND(1.005, 2)`` is 1.0 there, 1.01 in Spark). Both as before when the types are
unknown."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
import sqlglot
from sqlglot.schema import MappingSchema

from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import render_query
from dagster_sparkmesh.project.sql.model import canonical_sql
from dagster_sparkmesh.project.sql.spark_support import with_spark_equivalents
from dagster_sparkmesh.state.store import open_state_store
from dagster_sparkmesh.project.sql.typed_operands import (
    MARKER,
    marked_operands,
    resolved_noting_unknowns,
    resolved_operands,
)

QUERY = "SELECT (a + b) / c / 2 AS x, a / (b / 'x,)') AS y, a / 2.0 AS z, a / b AS q FROM s.nums WHERE d >= @start_ds"
SCHEMA = MappingSchema({"s": {"nums": {"a": "INT", "b": "INT", "c": "BIGINT", "d": "DATE"}}}, dialect="spark")


def _marked(sql: str, dialect: str) -> str:
    return canonical_sql(marked_operands(sqlglot.parse_one(sql, read=dialect), dialect))


def test_divisions_of_integers_are_cast_and_the_others_are_written_as_before():
    assert resolved_operands(_marked(QUERY, "postgres"), SCHEMA) == (
        "SELECT CAST(CAST((a + b) / c AS BIGINT) / 2 AS BIGINT) AS x, a / (b / 'x,)') AS y, a / 2.0 AS z, "
        "CAST(a / b AS BIGINT) AS q FROM s.nums WHERE d >= ${start_ds}"
    )


def test_without_the_operands_types_the_query_is_the_one_written_before():
    unmarked = canonical_sql(sqlglot.parse_one(QUERY, read="postgres"))
    assert resolved_operands(_marked(QUERY, "postgres"), MappingSchema(dialect="spark")) == unmarked
    assert MARKER not in unmarked



def test_the_divisions_left_as_sparks_for_want_of_types_are_named():
    # e is in no table: e / a may divide two integers. a / 2.0 divides by a decimal whatever a is: nothing to say.
    query = "SELECT a / b AS q, e / a AS w, a / 2.0 AS z, e / 2.5 AS v FROM s.nums"
    typed = resolved_noting_unknowns(_marked(query, "postgres"), SCHEMA)
    assert typed.text == "SELECT CAST(a / b AS BIGINT) AS q, e / a AS w, a / 2.0 AS z, e / 2.5 AS v FROM s.nums"
    assert (typed.untyped_divisions, typed.untyped_days) == (("e / a",), ())
    untyped = resolved_noting_unknowns(_marked(query, "postgres"), MappingSchema(dialect="spark"))
    assert untyped.untyped_divisions == ("a / b", "e / a")


def test_a_model_whose_division_cannot_be_typed_is_warned_of_at_load(tmp_path):
    project = load_project(_project(tmp_path / "p", MODELS), use_cache=False)
    [warning] = [w for w in project.warnings if "as Spark does" in w]
    assert warning.startswith("unknown.sql: s.unknown computes `x / y` as Spark does, because the types of the columns")
    assert "postgres divides two integers into an integer (7 / 2 is 3; in Spark 3.5)" in warning
    assert "declare the columns of the tables it reads (external_models.yaml" in warning
    state = open_state_store(None, tmp_path / "p", clock=lambda: datetime(2024, 1, 3))
    try:  # the plan carries it, so the CLI's plan and Dagster's plan page show it
        assert warning in build_plan(project, state, "prod", execution_time=datetime(2024, 1, 3)).warnings
    finally:
        state.close()
    externals = "- name: raw.events\n  columns:\n    x: int\n    y: int\n"
    (tmp_path / "p" / "external_models.yaml").write_text(externals)
    declared = load_project(tmp_path / "p", use_cache=False)
    assert declared.models["s.unknown"].query == "SELECT CAST(x / y AS BIGINT) AS r FROM raw.events"
    assert not [w for w in declared.warnings if "as Spark does" in w]


@pytest.mark.parametrize("dialect", ["duckdb", "snowflake", "bigquery", "spark", "mysql"])
def test_dialects_whose_division_is_exact_are_left_alone(dialect):
    assert MARKER not in _marked("SELECT a / b AS q FROM s.nums", dialect)


@pytest.mark.parametrize("dialect", ["postgres", "trino", "redshift", "tsql", "sqlite"])
def test_dialects_that_divide_integers_into_integers_are_marked(dialect):
    assert MARKER in _marked("SELECT a / b AS q FROM s.nums", dialect)


def _rendered(model, table_for: dict[str, str]) -> str:
    return render_query(model, start=datetime(2024, 1, 1), end=datetime(2024, 1, 2),
                        execution_time=datetime(2024, 1, 2), table_for=table_for)


def _written(folder: Path, dialect: str, files: dict[str, str]) -> Path:
    """A project in ``dialect`` of ``files`` (path under the folder -> text)."""
    config = f"model_defaults:\n  dialect: {dialect}\n  start: '2024-01-01'\n"
    for name, text in {"config.yaml": config, **files}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def _project(folder: Path, files: dict[str, str]) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "seeds").mkdir()
    (folder / "seeds" / "nums.csv").write_text("a,b\n7,2\n-7,2\n9,3\n")
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: postgres\n  start: '2024-01-01'\n")
    for name, text in files.items():
        (folder / "models" / name).write_text(text)
    return folder


MODELS = {
    "nums.sql": "MODEL (name s.nums, kind SEED (path '../seeds/nums.csv'), columns (a INT, b INT));\n",
    "divs.sql": "MODEL (name s.divs, kind FULL);\nSELECT a, b, a / b AS q, a / 2.0 AS half FROM s.nums\n",
    "halves.sql": "MODEL (name s.halves, kind FULL);\nSELECT q, q / 2 AS qq, q / half AS r FROM s.divs\n",
    "unknown.sql": "MODEL (name s.unknown, kind FULL);\nSELECT x / y AS r FROM raw.events\n",
    "check.sql": "MODEL (name s.check, kind AUDIT_ONLY);\nSELECT * FROM s.divs WHERE a / b > 3\n",
}


def test_a_projects_queries_are_typed_with_their_parents_columns_and_keep_no_marker(tmp_path):
    project = load_project(_project(tmp_path / "p", MODELS), use_cache=False)
    queries = {name: model.query for name, model in project.models.items()}
    assert queries["s.divs"] == "SELECT a, b, CAST(a / b AS BIGINT) AS q, a / 2.0 AS half FROM s.nums"
    # q is an integer because its parent's division is one; q / half divides by a decimal.
    assert queries["s.halves"] == "SELECT q, CAST(q / 2 AS BIGINT) AS qq, q / half AS r FROM s.divs"
    assert queries["s.unknown"] == "SELECT x / y AS r FROM raw.events"  # an undeclared table: types unknown
    assert not any(MARKER in (query or "") for query in queries.values())
    assert project.standalone_audits["s.check"].query == "SELECT * FROM s.divs WHERE CAST(a / b AS BIGINT) > 3"


def test_on_spark_integers_divide_as_postgresql_divides_them(engine, schema, tmp_path):
    project = load_project(_project(tmp_path / "p", MODELS), use_cache=False)
    engine.catalog.execute(f"CREATE TABLE {schema}.nums AS SELECT * FROM VALUES (7, 2), (-7, 2), (9, 3) AS t(a, b)")
    sql = _rendered(project.models["s.divs"], {"s.nums": f"{schema}.nums"})
    rows = engine.catalog.query_rows(f"SELECT a, q FROM ({sql}) ORDER BY a")
    assert [tuple(row) for row in rows] == [(-7, -3), (7, 3), (9, 3)]


def test_a_unit_test_reading_its_model_with_its_own_vars_gets_the_divisions_written_too(tmp_path):
    folder = _project(tmp_path / "p", {**MODELS, "per.sql": "MODEL (name s.per, kind FULL);\nSELECT a / @per AS q FROM s.nums\n"})
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: postgres\n  start: '2024-01-01'\nvariables:\n  per: 2\n")
    (folder / "tests").mkdir()
    (folder / "tests" / "test_per.yaml").write_text(
        "test_per:\n  model: s.per\n  vars:\n    per: 3\n  inputs:\n    s.nums:\n      - {a: 7, b: 1}\n"
        "  outputs:\n    query:\n      - {q: 2}\n"
    )
    project = load_project(folder, use_cache=False)
    assert project.models["s.per"].query == "SELECT CAST(a / 2 AS BIGINT) AS q FROM s.nums"
    assert project.unit_tests[0].model_query == "SELECT CAST(a / 3 AS BIGINT) AS q FROM s.nums"


ROUNDS = ("SELECT ROUND(v, 2) AS r, ROUND(v, 2), ROUND(ROUND(v, 3) * 2, -1) AS z, ROUND(SUM(v) * i, 2) AS s, "
          "ROUND(n, 2) AS nn, ROUND(f, 2) AS ff, ROUND(1.005, 2) AS lit, ROUND(v) AS whole FROM s.p")
ROUND_SCHEMA = MappingSchema({"s": {"p": {"v": "DOUBLE", "n": "DECIMAL(10,3)", "i": "INT", "f": "FLOAT"}}},
                             dialect="spark")


def _duckdb_marked(sql: str) -> str:
    written = with_spark_equivalents(sqlglot.parse_one(sql, read="duckdb"), dialect="duckdb", typed_later=True)
    return canonical_sql(marked_operands(written, "duckdb"))


def test_duckdbs_round_of_a_double_column_is_written_as_duckdb_rounds_once_its_type_is_known():
    marked = _duckdb_marked(ROUNDS)
    assert marked.count(MARKER) == 7  # a literal and a ROUND to a whole number are Spark's already
    assert resolved_operands(marked, ROUND_SCHEMA) == (
        "SELECT (ROUND((v) * POWER(10, 2)) / POWER(10, 2)) AS r, (ROUND((v) * POWER(10, 2)) / POWER(10, 2)) AS "
        "`round(v, 2)`, (ROUND(((ROUND((v) * POWER(10, 3)) / POWER(10, 3)) * 2) / POWER(10, 1)) * POWER(10, 1)) "
        "AS z, "
        "(ROUND((SUM(v) * i) * POWER(10, 2)) / POWER(10, 2)) AS s, ROUND(n, 2) AS nn, ROUND(f, 2) AS ff, "
        "ROUND(1.005, 2) AS lit, ROUND(v) AS whole FROM s.p"
    )
    # Unknown types: Spark's ROUND, as before (a DECIMAL rounds alike in both; sqlglot types any ROUND a DOUBLE).
    assert resolved_operands(marked, MappingSchema(dialect="spark")) == (
        "SELECT ROUND(v, 2) AS r, ROUND(v, 2) AS `round(v, 2)`, ROUND(ROUND(v, 3) * 2, -1) AS z, "
        "ROUND(SUM(v) * i, 2) AS s, ROUND(n, 2) AS nn, ROUND(f, 2) AS ff, ROUND(1.005, 2) AS lit, ROUND(v) AS whole "
        "FROM s.p"
    )
    assert MARKER not in _duckdb_marked("SELECT FLOOR(v) AS r FROM s.p")


def test_a_duckdb_seeds_double_column_rounds_on_spark_as_sqlmesh_rounds_it_on_duckdb(engine, schema, tmp_path):
    # SQLMesh 0.236.4 on DuckDB: 1.0, 0.28, 2.68, -1.0 (the doubles 1.005 and 0.285 lie below the half); Spark's
    # ROUND gave 1.01 and 0.29. A DECIMAL column rounds its decimal value, in both.
    folder = _written(tmp_path / "p", "duckdb", {
        "seeds/prices.csv": "id,v\n1,1.005\n2,0.285\n3,2.675\n4,-1.005\n",
        "models/prices.sql": "MODEL (name s.prices, kind SEED (path '../seeds/prices.csv'));\n",
        "models/r.sql": "MODEL (name s.r, kind FULL);\n"
                        "SELECT id, ROUND(v, 2) AS r, ROUND(v::DECIMAL(10, 3), 2) AS d FROM s.prices\n",
    })
    project = load_project(folder, use_cache=False)
    assert project.models["s.r"].query == (
        "SELECT id, (ROUND((v) * POWER(10, 2)) / POWER(10, 2)) AS r, ROUND(CAST(v AS DECIMAL(10, 3)), 2) AS d "
        "FROM s.prices")
    engine.catalog.execute(f"CREATE TABLE {schema}.prices AS SELECT * FROM VALUES "
                           "(1, 1.005D), (2, 0.285D), (3, 2.675D), (4, -1.005D) AS t(id, v)")
    sql = _rendered(project.models["s.r"], {"s.prices": f"{schema}.prices"})
    rows = engine.catalog.query_rows(f"SELECT id, r, CAST(d AS STRING) FROM ({sql}) ORDER BY id")
    assert [tuple(row) for row in rows] == [(1, 1.0, "1.01"), (2, 0.28, "0.29"), (3, 2.68, "2.68"), (4, -1.0, "-1.01")]


def test_only_the_models_query_is_typed_its_statements_and_audits_round_as_spark_writes_them(tmp_path):
    # A statement is run as it is: a marker left in it would be a function Spark does not know.
    folder = _written(tmp_path / "p", "duckdb", {
        "audits/rounded.sql": "AUDIT (name rounded, dialect duckdb);\n"
                              "SELECT * FROM @this_model WHERE ROUND(v, 2) < 0\n",
        "models/m.sql": "MODEL (name s.m, kind FULL, audits (rounded));\n"
                        "CREATE TABLE IF NOT EXISTS s.log AS SELECT ROUND(v, 2) AS r FROM s.src;\n"
                        "SELECT ROUND(v, 2) AS r, v FROM s.src;\n"
                        "INSERT INTO s.log SELECT ROUND(v, 3) FROM s.src;\n",
        "models/src.sql": "MODEL (name s.src, kind FULL);\nSELECT 1.005::DOUBLE AS v\n",
    })
    project = load_project(folder, use_cache=False)
    model = project.models["s.m"]
    assert model.pre_statements == ("CREATE TABLE IF NOT EXISTS s.log AS SELECT ROUND(v, 2) AS r FROM s.src",)
    assert model.post_statements == ("INSERT INTO s.log SELECT ROUND(v, 3) AS `round(v, 3)` FROM s.src",)
    assert model.query == "SELECT (ROUND((v) * POWER(10, 2)) / POWER(10, 2)) AS r, v FROM s.src"
    assert not any(MARKER in audit.query for audit in project.audits.values())


def test_a_date_column_minus_a_date_column_is_a_number_of_days_as_in_the_dialect(engine, schema, tmp_path):
    # PostgreSQL and DuckDB: DATE - DATE is an integer (SQLMesh 0.236.4 on DuckDB: -30, 60); Spark's is an interval,
    # and ``d - d2 > 30`` stopped there (DATATYPE_MISMATCH). A number of days divides as an integer in PostgreSQL.
    folder = _written(tmp_path / "p", "postgres", {
        "seeds/w.csv": "id,d,d2,ts\n1,2024-01-01,2024-01-31,2024-01-01 10:00:00\n"
                       "2,2024-03-01,2024-01-01,2024-03-01 00:00:00\n",
        "models/w.sql": "MODEL (name s.w, kind SEED (path '../seeds/w.csv'), "
                        "columns (id INT, d DATE, d2 DATE, ts TIMESTAMP));\n",
        "models/gap.sql": "MODEL (name s.gap, kind FULL);\n"
                          "SELECT id, d - d2 AS days, (d - d2) / 7 AS weeks, d - d2 > 30 AS long_gap, ts - ts AS kept "
                          "FROM s.w\n",
    })
    project = load_project(folder, use_cache=False)
    assert project.models["s.gap"].query == (
        "SELECT id, DATEDIFF(d, d2) AS days, CAST((DATEDIFF(d, d2)) / 7 AS BIGINT) AS weeks, DATEDIFF(d, d2) > 30 "
        "AS long_gap, ts - ts AS kept FROM s.w")
    engine.catalog.execute(f"CREATE TABLE {schema}.w AS SELECT id, CAST(d AS DATE) AS d, CAST(d2 AS DATE) AS d2, "
                           "CAST(ts AS TIMESTAMP) AS ts FROM VALUES "
                           "(1, '2024-01-01', '2024-01-31', '2024-01-01 10:00:00'), "
                           "(2, '2024-03-01', '2024-01-01', '2024-03-01 00:00:00') AS t(id, d, d2, ts)")
    sql = _rendered(project.models["s.gap"], {"s.w": f"{schema}.w"})
    rows = engine.catalog.query_rows(f"SELECT id, days, weeks, long_gap FROM ({sql}) ORDER BY id")
    assert [tuple(row) for row in rows] == [(1, -30, -4, False), (2, 60, 8, True)]
