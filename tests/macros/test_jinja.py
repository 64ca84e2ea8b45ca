"""Jinja blocks and Jinja macros from ``macros/*.sql`` render when the project loads (SQLMesh's jinja_macros.md)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh import load_project
from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.rendering import render_query
from dagster_sparkmesh.project.sql.model import parse_sql_model


def query(body: str, variables: dict | None = None) -> str:
    text = "MODEL (name db.m, kind FULL);\n" + body
    return parse_sql_model(Path("m.sql"), text, ModelDefaults(), variables or {}).model.query


CASES = [
    ("a query block", "JINJA_QUERY_BEGIN;\nSELECT {{ 1 + 1 }} AS two;\nJINJA_END;", "SELECT 2 AS two"),
    (
        "set and use a variable",
        "JINJA_QUERY_BEGIN;\n{% set my_col = 'num_orders' %}\nSELECT item_id, COUNT(DISTINCT id) AS {{ my_col }} FROM db.t GROUP BY item_id;\nJINJA_END;",
        "SELECT item_id, COUNT(DISTINCT id) AS num_orders FROM db.t GROUP BY item_id",
    ),
    (
        "a for loop",
        "JINJA_QUERY_BEGIN;\nSELECT\n{% for v in ['car', 'bus'] %}\n  CASE WHEN user_vehicle = '{{ v }}' THEN 1 ELSE 0 END AS vehicle_{{ v }}{{ ',' if not loop.last }}\n{% endfor %}\nFROM db.t;\nJINJA_END;",
        "SELECT CASE WHEN user_vehicle = 'car' THEN 1 ELSE 0 END AS vehicle_car, CASE WHEN user_vehicle = 'bus' THEN 1 ELSE 0 END AS vehicle_bus FROM db.t",
    ),
    (
        "an if",
        "JINJA_QUERY_BEGIN;\n{% set testing = True %}\nSELECT normal_column {% if testing %}, testing_column{% endif %} FROM db.t;\nJINJA_END;",
        "SELECT normal_column, testing_column FROM db.t",
    ),
    ("var() reads config variables", "JINJA_QUERY_BEGIN;\nSELECT '{{ var('region') }}' AS r;\nJINJA_END;", "SELECT 'EU' AS r"),
    (
        "interval variables become macros, quoted or not",
        "JINJA_QUERY_BEGIN;\nSELECT a FROM db.t WHERE ds BETWEEN '{{ start_ds }}' AND {{ end_ds }};\nJINJA_END;",
        "SELECT a FROM db.t WHERE ds BETWEEN @start_ds AND @end_ds",
    ),
    ("bare braces without a block", "SELECT {{ 40 + 2 }} AS answer", "SELECT 42 AS answer"),
    (
        # SQLMesh's sushi example (customer_revenue_by_day.sql) writes its interval filter this way.
        "braces only inside a string literal, without a block",
        "SELECT a FROM db.t WHERE ds BETWEEN CAST('{{ start_ds }}' AS DATE) AND CAST('{{ end_ds }}' AS DATE)",
        "SELECT a FROM db.t WHERE ds BETWEEN CAST(@start_ds AS DATE) AND CAST(@end_ds AS DATE)",
    ),
    (
        "a statement block before the query",
        "JINJA_STATEMENT_BEGIN;\nSET spark.sm.k = {{ 3 * 3 }};\nJINJA_END;\nSELECT 1 AS a",
        "SELECT 1 AS a",
    ),
]


@pytest.mark.parametrize(("body", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_jinja(body, expected):
    assert query(body, {"region": "EU"}) == expected


def test_a_statement_block_is_a_pre_statement():
    text = "MODEL (name db.m, kind FULL);\nJINJA_STATEMENT_BEGIN;\nSET spark.sm.k = {{ 3 * 3 }};\nJINJA_END;\nSELECT 1 AS a"
    model = parse_sql_model(Path("m.sql"), text, ModelDefaults(), {}).model
    assert model.pre_statements == ("SET spark.sm.k = 9",)


def test_jinja_macros_from_the_macros_folder(tmp_path: Path):
    (tmp_path / "models").mkdir()
    (tmp_path / "macros").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (tmp_path / "macros" / "aliases.sql").write_text("{% macro alias(expression, alias) %}\n  {{ expression }} AS {{ alias }}\n{% endmacro %}\n")
    (tmp_path / "models" / "m.sql").write_text(
        "MODEL (name db.m, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));\n"
        "JINJA_QUERY_BEGIN;\nSELECT item_id, {{ alias('item_id', 'item_id2') }}, {{ alias(\"'item_id'\", 'label') }}, ds\n"
        "FROM db.src WHERE ds >= '{{ start_ds }}';\nJINJA_END;\n"
    )
    (tmp_path / "external_models.yaml").write_text("- name: db.src\n  columns:\n    item_id: int\n    ds: string\n")
    model = load_project(tmp_path, use_cache=False).models["db.m"]
    assert model.query == "SELECT item_id, item_id AS item_id2, 'item_id' AS label, ds FROM db.src WHERE ds >= @start_ds"
    rendered = render_query(model, start=datetime(2024, 1, 2), end=datetime(2024, 1, 3), execution_time=datetime(2024, 1, 3),
                            table_for=lambda name: name)
    assert rendered.endswith("WHERE ds >= '2024-01-02'")
    # Editing a Jinja macro is an edit of its users.
    before = model.fingerprint
    (tmp_path / "macros" / "aliases.sql").write_text("{% macro alias(expression, alias) %}\n  UPPER({{ expression }}) AS {{ alias }}\n{% endmacro %}\n")
    assert load_project(tmp_path).models["db.m"].fingerprint != before


def test_undefined_names_are_errors():
    with pytest.raises(ProjectError, match="'nope' is undefined"):
        query("JINJA_QUERY_BEGIN;\nSELECT {{ nope }};\nJINJA_END;")
