"""Interval macros survive loading as placeholders, config variables become literals, bad macros are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.macros import BUILTIN_MACROS
from dagster_sparkmesh.project.sql.model import parse_sql_model


def query(sql: str, variables: dict | None = None, dialect: str = "spark") -> str:
    text = f"MODEL (name db.m, kind FULL, dialect {dialect});\n{sql}"
    return parse_sql_model(Path("m.sql"), text, ModelDefaults(), variables or {}).model.query


@pytest.mark.parametrize("name", sorted(BUILTIN_MACROS - {"this_model"}))
@pytest.mark.parametrize("dialect", ["spark", "duckdb"])
def test_time_macros_stay_placeholders(name, dialect):
    assert query(f"SELECT a FROM db.t WHERE x >= @{name}", dialect=dialect) == f"SELECT a FROM db.t WHERE x >= @{name}"


def test_every_time_macro_of_the_brief_is_supported():
    expected = {
        f"{prefix}_{suffix}" for prefix in ("start", "end") for suffix in ("ds", "date", "ts", "dt", "epoch", "millis")
    } | {"execution_ds", "execution_ts", "execution_dt", "execution_date", "execution_epoch", "this_model"}
    assert expected <= BUILTIN_MACROS


def test_this_model_is_a_placeholder_and_not_a_dependency():
    text = "MODEL (name db.m, kind FULL);\nSELECT a FROM @this_model AS prev"
    parsed = parse_sql_model(Path("m.sql"), text, ModelDefaults(), {})
    assert parsed.model.query == "SELECT a FROM @this_model AS prev"
    assert parsed.model.depends_on == frozenset()


def test_macros_inside_strings_and_comments_are_text():
    assert query("SELECT '@my_macro(1)' AS a -- @EACH(x)\nFROM db.t") == "SELECT '@my_macro(1)' AS a FROM db.t"


def test_config_variables_become_literals():
    variables = {"region": "EU", "limit": 10, "ratio": 0.5, "flag": True}
    sql = "SELECT a FROM db.t WHERE r = @region AND n < @LIMIT AND x > @VAR('ratio') AND f = @var('flag')"
    assert query(sql, variables) == "SELECT a FROM db.t WHERE r = 'EU' AND n < 10 AND x > 0.5 AND f = TRUE"


def test_var_default_is_used_when_the_variable_is_missing():
    assert query("SELECT @VAR('missing', 3) AS a") == "SELECT 3 AS a"


def test_macro_in_a_pre_statement():
    text = "MODEL (name db.m, kind FULL);\nSET spark.sm.start = @start_ds;\nSELECT 1 AS a"
    model = parse_sql_model(Path("m.sql"), text, ModelDefaults(), {}).model
    assert model.pre_statements == ("SET spark.sm.start = @start_ds",)


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("SELECT @my_macro(a) FROM db.t", "unknown macro @my_macro"),
        ("SELECT {{ nope }} AS a", "Jinja: 'nope' is undefined"),
        ("JINJA_QUERY_BEGIN;\nSELECT {% if %} 1;\nJINJA_END;", "Jinja syntax error"),
        ("SELECT a FROM db.t WHERE @IF(a > 1, a = 1)", "the condition of @IF is not constant"),
        ("SELECT a FROM db.@{table_name}", "unknown macro variable @{table_name}"),
        ("SELECT @VAR('nope') AS a", "unknown variable 'nope'"),
        ("SELECT @not_a_variable AS a", "unknown macro variable @not_a_variable"),
    ],
)
def test_unsupported_macros_are_refused_with_file_and_line(sql, fragment):
    with pytest.raises(ProjectError) as caught:
        query(sql)
    error = caught.value
    assert fragment in error.message
    assert error.path == Path("m.sql")
    assert error.line is not None and error.line >= 2
    assert error.snippet and error.hint
