"""Macros in custom audits (the call's arguments are macro variables) and in MODEL headers."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.model.builtin_audits import render_audit_query
from dagster_sparkmesh.model.records import AuditCall
from dagster_sparkmesh.project.checks.audits import load_audits
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.sql.model import parse_sql_model


def test_a_custom_audit_with_each_over_its_argument(tmp_path: Path):
    (tmp_path / "audits").mkdir()
    (tmp_path / "audits" / "nulls.sql").write_text(
        "AUDIT (name no_nulls);\n"
        "SELECT * FROM @this_model WHERE @REDUCE(@EACH(@columns, c -> c IS NULL), (a, b) -> a OR b)\n"
    )
    audits = load_audits(tmp_path)
    call = AuditCall(name="no_nulls", args=(("columns", "(id, ds)"),))
    assert render_audit_query(call, "`db`.`t`", audits) == "SELECT * FROM `db`.`t` WHERE id IS NULL OR ds IS NULL"


def test_macros_in_header_properties():
    text = (
        "MODEL (name db.m, kind FULL, owner @VAR('owner', 'me'), description @VAR('what'),\n"
        "  audits (not_null(columns := @cols)), cron '@daily');\n"
        "SELECT 1 AS id"
    )
    model = parse_sql_model(Path("m.sql"), text, ModelDefaults(), {"what": "a table", "cols": ["id"]}).model
    assert model.owner == "me"
    assert model.description == "a table"
    assert model.audits[0].args == (("columns", "('id')"),)  # config strings are values, as in SQLMesh
    assert model.cron == "@daily"


def test_inline_audits_in_a_model_file(tmp_path: Path):
    from dagster_sparkmesh import load_project

    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (tmp_path / "models" / "items.sql").write_text(
        "MODEL (name db.items, kind FULL, audits (does_not_exceed(column := id, threshold := 1000), price_set));\n"
        "SELECT 1 AS id, 2 AS price;\n"
        "\n"
        "AUDIT (name does_not_exceed);\n"
        "SELECT * FROM @this_model WHERE @column >= @threshold;\n"
        "\n"
        "AUDIT (name price_set, blocking false);\n"
        "SELECT * FROM @this_model WHERE price IS NULL;\n"
    )
    project = load_project(tmp_path, use_cache=False)
    assert project.models["db.items"].query == "SELECT 1 AS id, 2 AS price"
    assert set(project.audits) == {"does_not_exceed", "price_set"}
    assert project.audits["price_set"].blocking is False
    call = project.models["db.items"].audits[0]
    assert render_audit_query(call, "`db`.`t`", project.audits) == "SELECT * FROM `db`.`t` WHERE id >= 1000"


def test_a_seed_model_file_may_start_with_its_inline_audits(tmp_path: Path):
    """A SEED model has no query: its ``AUDIT (...)`` blocks follow the header directly (SQLMesh's sushi example,
    waiter_names.sql), trailing commas included."""
    from dagster_sparkmesh import load_project

    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (tmp_path / "names.csv").write_text("id,name\n1,Toby\n")
    (tmp_path / "models" / "names.sql").write_text(
        "MODEL (name db.names, kind SEED (path '../names.csv'), audits (positive_id, not_too_big(threshold := 9)));\n"
        "\n"
        "AUDIT (\n  name not_too_big,\n);\n"
        "SELECT * FROM @this_model WHERE id >= @threshold;\n"
        "\n"
        "AUDIT (name positive_id);\n"
        "SELECT * FROM @this_model WHERE id < 0;\n"
    )
    project = load_project(tmp_path, use_cache=False)
    assert project.models["db.names"].kind.name == "SEED"
    assert {"not_too_big", "positive_id"} <= set(project.audits)
    call = project.models["db.names"].audits[1]
    assert render_audit_query(call, "`db`.`t`", project.audits) == "SELECT * FROM `db`.`t` WHERE id >= 9"
