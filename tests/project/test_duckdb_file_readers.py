"""DuckDB's ``READ_CSV`` / ``READ_CSV_AUTO`` and ``READ_PARQUET`` with options: translated to Spark's file reads with
options where Spark reads the same rows, refused at load (file, line, why, what to write) otherwise."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import render_query


def _model(root: Path, query: str):
    (root / "models").mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
    (root / "models" / "m.sql").write_text(f"MODEL (name s.m, kind FULL);\n\n{query}\n")
    project = load_project(root, use_cache=False)
    return project.models["s.m"], project


def _rendered(root: Path, query: str) -> str:
    model, project = _model(root, query)
    assert model.depends_on == frozenset() and not project.external_models
    return render_query(model, start=datetime(2024, 1, 1), end=datetime(2024, 1, 2), execution_time=datetime(2024, 1, 2),
                        table_for=lambda name: None, models=project.models)


def test_read_csv_auto_with_a_header_is_a_csv_read_with_inferred_types(tmp_path: Path) -> None:
    model, _ = _model(tmp_path, "SELECT * FROM read_csv_auto('data/z.csv', header=true) AS z")
    # The stored query keeps the path as written: the fingerprint does not depend on the checkout's folder.
    assert model.query == (
        "SELECT * FROM SPARKMESH_FILE('csv', 'data/z.csv', 'header', 'true', 'inferSchema', 'false', 'escape', '\"', "
        "'sparkmesh.types', 'duckdb') AS z"
    )
    # A file not readable here (not there yet, or not local) is typed by Spark's inference.
    assert _rendered(tmp_path, "SELECT * FROM read_csv_auto('data/z.csv', header=true) AS z") == (
        f"SELECT * FROM csv.`{tmp_path.resolve()}/data/z.csv` WITH ('header' = 'true', 'inferSchema' = 'true', "
        "'escape' = '\"') AS z"
    )


SNIFFED = (
    "id,code,big,flt,flt0,b,b2,d,ts,mixed,neg,e,z,sp,empty\n"
    "1,007,3000000000,1.5,01.5,true,T,2024-01-05,2024-01-05 10:00:00,1,-3,1e3,0, 5,\n"
    "2,010,1,2,0.5,False,F,2024-02-01,2024-01-05T11:00:00,x,+4,2.5E-1,0,6,\n"
    "3,123,2,3.25,1,TRUE,t,2024-03-01,2024-01-05 12:00:00.123,2,0,3,0,7,\n"
)


def test_a_csv_read_has_the_types_duckdbs_sniffer_gives_its_columns(tmp_path: Path, engine) -> None:
    # DuckDB 1.5.6 (checked): codes with leading zeros stay text, whole numbers are BIGINT, '+4' makes a column text.
    # Spark's inference gave the codes as the numbers 7, 10, 123, and an INT id that overflowed `id * 10`.
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "z.csv").write_text(SNIFFED)
    rendered = _rendered(tmp_path, "SELECT * FROM read_csv('data/z.csv', header = true) AS z")
    assert rendered.startswith("SELECT * FROM (SELECT CAST(`id` AS BIGINT) AS `id`, `code`, CAST(`big` AS BIGINT) AS")
    frame = engine.catalog.query_df(rendered)
    types = [(field.name, field.dataType.simpleString()) for field in frame.schema.fields]
    assert types == [
        ("id", "bigint"), ("code", "string"), ("big", "bigint"), ("flt", "double"), ("flt0", "string"),
        ("b", "boolean"), ("b2", "boolean"), ("d", "date"), ("ts", "timestamp"), ("mixed", "string"),
        ("neg", "string"), ("e", "double"), ("z", "bigint"), ("sp", "bigint"), ("empty", "string"),
    ]
    rows = sorted(tuple(row) for row in frame.select("code", "b2", "sp", "e", "empty").collect())
    assert rows == [("007", True, 5, 1000.0, None), ("010", False, 6, 0.25, None), ("123", True, 7, 3.0, None)]


@pytest.mark.parametrize(("first_line", "header"), [("Date,Close,Volume\n", True), ("", False)])
def test_declared_columns_name_and_type_the_columns_by_position(tmp_path: Path, engine, first_line, header) -> None:
    # A user's READ_CSV('spy.csv', columns = {...}): DuckDB sniffs whether the first row is a header (checked, both).
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "spy.csv").write_text(f"{first_line}2023-01-03 00:00:00,382.51,59722233\n2023-01-04,390.41,7\n")
    query = "SELECT * FROM read_csv('data/spy.csv', columns = {'date': 'TIMESTAMP', 'close': 'DOUBLE', 'volume': 'BIGINT'})"
    rendered = _rendered(tmp_path, query)
    assert (f"'header' = '{str(header).lower()}'" in rendered) and ("`Close`" in rendered) is header
    frame = engine.catalog.query_df(rendered)
    assert [(f.name, f.dataType.simpleString()) for f in frame.schema.fields] == [
        ("date", "timestamp_ntz"), ("close", "double"), ("volume", "bigint")
    ]
    assert sorted(tuple(row)[1:] for row in frame.collect()) == [(382.51, 59722233), (390.41, 7)]


def test_read_csv_options_with_a_spark_equivalent(tmp_path: Path) -> None:
    rendered = _rendered(tmp_path, "SELECT a FROM read_csv('/d/s.csv', header = true, delim = ';', nullstr = 'NA', "
                                   "quote = '''', all_varchar = true)")
    assert rendered == (
        "SELECT a FROM csv.`/d/s.csv` WITH ('header' = 'true', 'inferSchema' = 'false', 'escape' = '\"', "
        "'sep' = ';', 'nullValue' = 'NA', 'quote' = '\\'')"
    )


def test_a_list_of_csv_files_is_unioned_by_position(tmp_path: Path) -> None:
    assert _rendered(tmp_path, "SELECT * FROM read_csv(['/d/a.csv', '/d/b.csv'], header = true) AS t") == (
        "SELECT * FROM (SELECT * FROM csv.`/d/a.csv` WITH ('header' = 'true', 'inferSchema' = 'true', 'escape' = '\"') "
        "UNION ALL SELECT * FROM csv.`/d/b.csv` WITH ('header' = 'true', 'inferSchema' = 'true', 'escape' = '\"')) AS t"
    )


def test_union_by_name_merges_the_parquet_schemas(tmp_path: Path) -> None:
    assert _rendered(tmp_path, "SELECT * FROM read_parquet('/d/*.parquet', union_by_name = true)") == (
        "SELECT * FROM parquet.`/d/*.parquet` WITH ('mergeSchema' = 'true')"
    )
    assert _rendered(tmp_path, "SELECT * FROM read_parquet('/d/*.parquet', union_by_name = false)") == (
        "SELECT * FROM parquet.`/d/*.parquet`"
    )


@pytest.mark.parametrize(
    ("call", "why"),
    [
        ("read_csv_auto('z.csv')", "READ_CSV_AUTO without header = true"),
        ("read_csv('z.csv', header = false)", "READ_CSV without header = true"),
        ("read_csv('z.csv', columns = 'a INT')", "READ_CSV's columns must be a struct of 'name': 'TYPE' literals"),
        ("read_csv('z.csv', header = true, auto_detect = false)", "READ_CSV with auto_detect = false"),
        ("read_parquet('a.parquet', filename = true)", "READ_PARQUET's option filename has no Spark equivalent"),
        ("read_parquet(['a.parquet', 'b.parquet'], union_by_name = true)", "READ_PARQUET of a list of files with union_by_name"),
        ("read_json_auto('a.json')", "DuckDB's READ_JSON_AUTO has no Spark equivalent"),
    ],
)
def test_what_spark_would_read_differently_is_refused_at_load(tmp_path: Path, call: str, why: str) -> None:
    with pytest.raises(ProjectError) as raised:
        _model(tmp_path, f"SELECT *\nFROM {call}")
    error = raised.value
    assert error.message.startswith(why) and "cannot run on Spark" in error.message
    assert error.path == tmp_path / "models" / "m.sql" and error.line == 4
    assert "header = true" in error.hint and "Python model" in error.hint
