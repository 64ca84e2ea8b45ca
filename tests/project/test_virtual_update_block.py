"""``ON_VIRTUAL_UPDATE_BEGIN; ...; ON_VIRTUAL_UPDATE_END;`` in a SQL model: parsed into ``on_virtual_update``."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.sql.model import parse_sql_model

MODEL = """MODEL (name shop.items, kind FULL);

SELECT 1 AS id;

ON_VIRTUAL_UPDATE_BEGIN;
-- grants on the view, not on the table
GRANT SELECT ON VIEW @this_model TO ROLE 'reader';
INSERT INTO logs.promotions SELECT @VAR('name'), COUNT(*) FROM @this_model;
on_virtual_update_end;
"""


def _parse(text: str, dialect: str = "spark"):
    return parse_sql_model(Path("models/items.sql"), text, ModelDefaults(dialect=dialect), {"name": "items"}).model


def test_the_block_becomes_on_virtual_update_and_leaves_the_model_statements_alone():
    model = _parse(MODEL)
    assert model.query == "SELECT 1 AS id"
    assert (model.pre_statements, model.post_statements) == ((), ())
    assert model.on_virtual_update[1] == "INSERT INTO logs.promotions SELECT 'items', COUNT(*) FROM @this_model"
    assert len(model.on_virtual_update) == 2


def test_statements_are_transpiled_from_the_model_dialect():
    text = MODEL.replace("GRANT SELECT ON VIEW @this_model TO ROLE 'reader';\n", "").replace("COUNT(*)", "IFNULL(1, 2)")
    assert _parse(text, "duckdb").on_virtual_update == (
        "INSERT INTO logs.promotions SELECT 'items', COALESCE(1, 2) FROM @this_model",
    )


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        (MODEL.replace("on_virtual_update_end;\n", ""), "ON_VIRTUAL_UPDATE_BEGIN without ON_VIRTUAL_UPDATE_END", 5),
        ("MODEL (name a.b);\nSELECT 1;\nON_VIRTUAL_UPDATE_END;\n", "ON_VIRTUAL_UPDATE_END without ON_VIRTUAL_UPDATE_BEGIN", 3),
        (MODEL.replace("-- grants", "ON_VIRTUAL_UPDATE_BEGIN;\n-- grants"), "a second ON_VIRTUAL_UPDATE_BEGIN", 6),
    ],
)
def test_unbalanced_markers_name_the_line(text: str, message: str, line: int):
    with pytest.raises(ProjectError) as error:
        _parse(text)
    assert message in str(error.value)
    assert error.value.line == line


def test_a_marker_inside_a_string_is_just_text():
    model = _parse("MODEL (name a.b);\nSELECT 'ON_VIRTUAL_UPDATE_BEGIN;' AS note\n")
    assert model.on_virtual_update == ()
