"""A SQL syntax error in the user's words: no parser token reprs, no expression class names."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot.errors import ParseError

from dagster_sparkmesh.macros.parse_errors import parse_error_description

CASES = [
    ("SELECT 1 AS id FROM", "Expected table name but got the end of the SQL"),
    ("SELECT a FROM t WHERE", "a WHERE clause is incomplete"),
    ("SELECT * FROM t ORDER BY", "an ORDER BY clause is incomplete"),
    ("SELECT SUM() FROM t", "SUM is incomplete"),
    ("SELECT (1", "Expecting )"),
]


@pytest.mark.parametrize("sql, said", CASES)
def test_a_syntax_error_is_described_without_the_parsers_internals(sql, said):
    with pytest.raises(ParseError) as raised:
        sqlglot.parse(sql, read="spark")
    assert parse_error_description(raised.value) == said


def test_a_model_stopping_mid_query_is_reported_at_its_line_in_words(tmp_path):
    from dagster_sparkmesh.errors import ProjectError
    from dagster_sparkmesh.project.loader import load_project

    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (tmp_path / "models" / "m.sql").write_text("MODEL (name shop.m, kind FULL);\nSELECT 1 AS id FROM\n")
    with pytest.raises(ProjectError) as raised:
        load_project(tmp_path)
    message = str(raised.value)
    assert "Expected table name but got the end of the SQL" in message and "m.sql:2" in message
    assert "Token" not in message
