"""SQL of another dialect that open-source Spark cannot run is a load-time error naming the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dagster_sparkmesh.cli import main
from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.loader import load_project


def _project(tmp_path: Path, dialect: str, body: str) -> Path:
    (tmp_path / "models").mkdir(parents=True)
    (tmp_path / "config.yaml").write_text(f"model_defaults:\n  dialect: {dialect}\n")
    (tmp_path / "external_models.yaml").write_text("- name: raw.t\n  columns: {a: int, b: int}\n- name: raw.u\n  columns: {a: int}\n")
    (tmp_path / "models" / "m.sql").write_text(f"MODEL (name db.m, kind FULL);\n\nSELECT 1 AS x,\n{body}\n")
    return tmp_path


@pytest.mark.parametrize(
    ("dialect", "body", "line", "message"),
    [
        ("duckdb", "  t.* REPLACE (a + 1 AS a)\nFROM raw.t AS t", 4, "SELECT * REPLACE / * RENAME cannot run on Spark"),
        ("snowflake", "  * RENAME (a AS z)\nFROM raw.t", 4, "SELECT * REPLACE / * RENAME cannot run on Spark"),
        ("duckdb", "  t.a\nFROM raw.t AS t\nASOF JOIN raw.u AS u ON t.a >= u.a", 6, "an ASOF / POSITIONAL join cannot run"),
        ("postgres", "  CAST(a AS JSONB) AS j\nFROM raw.t", 4, "a type Spark does not have (JSONB) cannot run on Spark"),
        ("bigquery", "  ARRAY(SELECT a FROM raw.u) AS xs\nFROM raw.t", 4, "ARRAY(subquery) cannot run on Spark"),
        ("postgres", "  a\nFROM raw.t\nFOR UPDATE", None, "sqlglot cannot write this in Spark SQL: Locking reads"),
    ],
)
def test_a_construct_spark_cannot_run_is_refused_at_load(tmp_path, dialect, body, line, message):
    project = _project(tmp_path, dialect, body)
    with pytest.raises(ProjectError) as error:
        load_project(project, use_cache=False)
    assert message in str(error.value)
    assert f"(the model is written in {dialect})" in str(error.value)
    assert error.value.path == project / "models" / "m.sql"
    if line is not None:
        assert error.value.line == line


def test_the_cli_reports_it_with_exit_code_2(tmp_path):
    project = _project(tmp_path, "duckdb", "  * REPLACE (a + 1 AS a)\nFROM raw.t")
    result = CliRunner().invoke(main, ["-p", str(project), "info"])
    assert result.exit_code == 2, result.output
    assert "m.sql:4" in result.output and "REPLACE" in result.output


def test_what_spark_can_run_loads_and_spark_models_are_left_alone(tmp_path):
    assert load_project(_project(tmp_path, "bigquery", "  * EXCEPT (a)\nFROM raw.t"), use_cache=False).models["db.m"].query
    spark_model = _project(tmp_path / "s", "spark", "  CAST(a AS STRING) AS s\nFROM raw.t")
    assert load_project(spark_model, use_cache=False).models["db.m"].query


PYTHON_MODEL = '''
import pandas as pd
from dagster_sparkmesh import model


@model("db.py_model", kind="FULL", columns={"x": "int"}, dialect="postgres",
       pre_statements=["CREATE TABLE IF NOT EXISTS db.log (payload JSONB)"])
def execute(context, start, end, execution_time, **kwargs):
    return pd.DataFrame({"x": [1]})
'''


def test_a_python_model_statement_spark_cannot_run_names_the_decorator(tmp_path):
    project = _project(tmp_path, "spark", "  1 AS y")
    (project / "models" / "py_model.py").write_text(PYTHON_MODEL)
    with pytest.raises(ProjectError) as error:
        load_project(project, use_cache=False)
    assert "@model pre_statements of db.py_model: a type Spark does not have (JSONB)" in str(error.value)
    assert (error.value.path, error.value.line) == (project / "models" / "py_model.py", 6)
