"""A model's unaliased columns are named as SQLMesh names them (``project.sql.output_names``): ``_col_<position>``
for an expression without a name of its own, the column's name for a column or a cast of one, the text of a literal.
The names are SQLMesh 0.236.4's for the same models on DuckDB (checked: /tmp/names_repro); Spark named them by their
text (``upper(name)``, ``(id + 1)``), so a reader of ``_col_1`` failed here."""

from __future__ import annotations

import pytest
import sqlglot

from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.sql.output_names import with_output_names


def _named(sql: str, dialect: str = "duckdb") -> str:
    return with_output_names(sqlglot.parse_one(sql, read=dialect)).sql(dialect=dialect)


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("SELECT id, UPPER(name), id + 1, CAST(x AS INT), st.f, COUNT(*) OVER (), 7, (SELECT 1), name AS n2, s.name "
         "FROM s.src AS s",
         "SELECT id, UPPER(name) AS _col_1, id + 1 AS _col_2, CAST(x AS INT), st.f, COUNT(*) OVER () AS _col_5, 7, "
         "(SELECT 1) AS _col_7, name AS n2, s.name FROM s.src AS s"),
        # A set operation takes the first SELECT's names; the others' do not matter.
        ("SELECT id, UPPER(name) FROM a UNION ALL SELECT id + 1, LOWER(name) FROM b",
         "SELECT id, UPPER(name) AS _col_1 FROM a UNION ALL SELECT id + 1, LOWER(name) FROM b"),
        ("WITH t AS (SELECT UPPER(x) FROM a) SELECT LOWER(y) FROM t",
         "WITH t AS (SELECT UPPER(x) FROM a) SELECT LOWER(y) AS _col_0 FROM t"),
        # After a star the position depends on what it expands to: Spark's names, as before.
        ("SELECT UPPER(name), *, LOWER(name) FROM s.src", "SELECT UPPER(name) AS _col_0, *, LOWER(name) FROM s.src"),
    ],
)
def test_unnamed_projections_are_named_by_their_position(sql, named):
    assert _named(sql) == named


def test_statements_that_are_not_queries_are_left_as_they_are():
    assert _named("INSERT INTO t SELECT UPPER(x) FROM a") == "INSERT INTO t SELECT UPPER(x) FROM a"


def test_on_spark_the_table_has_sqlmeshs_column_names(engine, tmp_path):
    folder = tmp_path / "p"
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n  start: '2024-01-01'\n")
    (folder / "models" / "m.sql").write_text(
        "MODEL (name s.m, kind FULL);\n"
        "SELECT id, UPPER(name), AVG(x) OVER (), ROUND(x, 1), x / 2 FROM (SELECT 1 AS id, 'ab' AS name, 2.5 AS x)\n"
    )
    query = load_project(folder, use_cache=False).models["s.m"].query
    assert query is not None
    frame = engine.spark.sql(query)
    assert frame.columns == ["id", "_col_1", "_col_2", "_col_3", "_col_4"]
    assert tuple(frame.collect()[0]) == (1, "AB", 2.5, 2.5, 1.25)



def test_after_a_macro_left_for_render_time_the_projections_keep_their_names(tmp_path):
    # @STAR expands when the model renders, to as many columns as the table has.
    folder = tmp_path / "p"
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n  start: '2024-01-01'\n")
    (folder / "models" / "src.sql").write_text("MODEL (name s.src, kind FULL);\nSELECT 1 AS a, 'b' AS b\n")
    (folder / "models" / "m.sql").write_text(
        "MODEL (name s.m, kind FULL);\nSELECT UPPER(b), @STAR(s.src), LOWER(b) FROM s.src\n")
    query = load_project(folder, use_cache=False).models["s.m"].query or ""
    assert query.startswith("SELECT UPPER(b) AS _col_0, ") and query.endswith(", LOWER(b) FROM s.src"), query
