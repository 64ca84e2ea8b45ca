"""Golden pairs: formatting, comments, keyword/identifier case never change Model.query; semantics always do."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.sql.model import parse_sql_model

PAIRS_FILE = Path(__file__).parent / "canonical" / "pairs.sql"


def _cases() -> list[pytest.param]:
    cases = []
    for block in PAIRS_FILE.read_text().split("\n## ")[1:]:
        title_line, _, body = block.partition("\n")
        fields = [field.strip() for field in title_line.split("|")]
        dialects = fields[2].split() if len(fields) > 2 else ["spark", "spark"]
        first, second = body.split("\n---\n")
        cases.append(pytest.param(fields[1], first, second, dialects, id=fields[0]))
    return cases


def canonical(query: str, dialect: str = "spark") -> str:
    text = f"MODEL (name db.m, kind FULL, dialect {dialect});\n{query}"
    return parse_sql_model(Path("m.sql"), text, ModelDefaults(), {}).model.query


def test_the_golden_file_has_enough_cases():
    assert len(_cases()) >= 15


@pytest.mark.parametrize(("expectation", "first", "second", "dialects"), _cases())
def test_canonical_pairs(expectation, first, second, dialects):
    a, b = canonical(first, dialects[0]), canonical(second, dialects[1])
    assert (a == b) is (expectation == "same"), f"{a!r} vs {b!r}"


def test_canonical_text_is_spark_sql_with_placeholders():
    query = canonical("select A::date from DB.T where ds between @start_ds and @end_ds", "duckdb")
    assert query == "SELECT CAST(a AS DATE) FROM db.t WHERE ds BETWEEN @start_ds AND @end_ds"


def test_identifiers_that_need_quotes_keep_them():
    assert canonical("SELECT `My Col`, `select` FROM db.t") == "SELECT `my col`, `select` FROM db.t"
