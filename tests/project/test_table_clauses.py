"""Clauses attached to tables and quoted column names load as written (issue 12, section 3)."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.sql.model import parse_sql_model


def _parse(text: str):
    return parse_sql_model(Path("m.sql"), text, ModelDefaults(), {})


def test_a_hint_names_an_alias_not_a_table():
    parsed = _parse("MODEL (name db.b, kind FULL);\nSELECT /*+ BROADCAST(a) */ a.id FROM db.a AS a JOIN db.c AS c ON a.id = c.id")
    assert {reference.name for reference in parsed.references} == {"db.a", "db.c"}
    assert parsed.model.query.startswith("SELECT /*+ BROADCAST(a) */")


def test_quoted_column_names_with_spaces():
    parsed = _parse("MODEL (name db.c, kind FULL, columns (`first name` STRING, id INT));\nSELECT 'x' AS `first name`, 1 AS id")
    assert parsed.model.columns == (("first name", "STRING"), ("id", "INT"))
