"""User macros from a project's ``macros/`` folder: loading, expansion before fingerprinting, rendering."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh import load_project
from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.rendering import render_query

PROJECT = Path(__file__).parent / "projects" / "user_macros"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "user_macros"
    shutil.copytree(PROJECT, copy)
    return copy


def test_user_macros_expand_at_load_time(project):
    loaded = load_project(project, use_cache=False)
    report = loaded.models["shop.report"]
    assert report.query == (
        "SELECT id, CASE WHEN vehicle = 'truck' THEN 1 ELSE 0 END AS vehicle_truck_flag, "
        "CASE WHEN vehicle = 'bus' THEN 1 ELSE 0 END AS vehicle_bus_flag, 42 AS answer, 'text' AS t, ds "
        "FROM shop.orders WHERE amount BETWEEN 10 * 2 - 10 AND 100 AND @SINCE_START(ds)"
    )
    # A macro generated the table reference: it is a dependency like any other.
    assert report.depends_on == frozenset({"shop.orders"})
    assert loaded.models["shop.orders"].owner == "data_team"


def test_a_macro_reading_the_interval_runs_at_render_time(project):
    loaded = load_project(project, use_cache=False)
    sql = render_query(
        loaded.models["shop.report"],
        start=datetime(2024, 1, 2),
        end=datetime(2024, 1, 3),
        execution_time=datetime(2024, 1, 3),
        table_for=lambda name: "sqlmesh__shop.shop__orders__1" if name == "shop.orders" else None,
        models=loaded.models,
    )
    assert "ds >= '2024-01-02'" in sql
    assert "`sqlmesh__shop`.`shop__orders__1` AS orders" in sql


def _fingerprints(project: Path) -> dict[str, str]:
    return {name: model.fingerprint for name, model in load_project(project).models.items()}


def test_reformatting_a_macro_changes_no_fingerprint(project):
    before = _fingerprints(project)
    file = project / "macros" / "indicators.py"
    file.write_text("# a comment\n" + file.read_text().replace("cases = []", "cases = [ ]  # reformatted"))
    assert _fingerprints(project) == before


def test_a_macro_change_changes_exactly_its_users(project):
    before = _fingerprints(project)
    file = project / "macros" / "indicators.py"
    file.write_text(file.read_text().replace("value * 2", "value * 3"))
    after = _fingerprints(project)
    assert after["shop.report"] != before["shop.report"]
    assert after["shop.orders"] == before["shop.orders"]
    assert after["shop.plain"] == before["shop.plain"]


def test_a_macro_that_raises_names_the_macro_and_the_line(project):
    (project / "macros" / "bad.py").write_text(
        "from dagster_sparkmesh import macro\n\n@macro()\ndef boom(evaluator):\n    raise ValueError('no')\n"
    )
    (project / "models" / "plain.sql").write_text("MODEL (name shop.plain, kind FULL);\n\nSELECT\n  @boom() AS x\n")
    with pytest.raises(ProjectError) as caught:
        load_project(project, use_cache=False)
    error = caught.value
    assert "macro @boom raised ValueError: no" in error.message
    assert (error.path.name, error.line, error.col) == ("plain.sql", 4, 3)


def test_a_macro_returning_something_else_than_sql_is_refused(project):
    (project / "macros" / "bad.py").write_text(
        "from dagster_sparkmesh import macro\n\n@macro()\ndef odd(evaluator):\n    return object\n"
    )
    (project / "models" / "plain.sql").write_text("MODEL (name shop.plain, kind FULL);\nSELECT @odd() AS x\n")
    with pytest.raises(ProjectError, match="macro @odd returned .* which is not SQL"):
        load_project(project, use_cache=False)


def test_a_macro_that_never_stops_is_bounded(project):
    (project / "macros" / "bad.py").write_text(
        "from dagster_sparkmesh import macro\n\n@macro()\ndef again(evaluator):\n    return '@again()'\n"
    )
    (project / "models" / "plain.sql").write_text("MODEL (name shop.plain, kind FULL);\nSELECT @again() AS x\n")
    with pytest.raises(ProjectError, match="nests deeper than"):
        load_project(project, use_cache=False)


def test_a_broken_macro_file_is_a_project_error(project):
    (project / "macros" / "bad.py").write_text("def broken(:\n")
    with pytest.raises(ProjectError) as caught:
        load_project(project, use_cache=False)
    assert caught.value.path.name == "bad.py"


def test_star_and_union_use_declared_columns_at_render_time(project):
    (project / "models" / "typed.sql").write_text(
        "MODEL (name shop.typed, kind FULL, columns (id INT, vehicle STRING, amount INT));\n"
        "SELECT id, vehicle, amount FROM shop.orders\n"
    )
    (project / "models" / "starred.sql").write_text(
        "MODEL (name shop.starred, kind FULL);\nSELECT @STAR(shop.typed, t, [amount], 'x_') FROM shop.typed AS t\n"
    )
    (project / "models" / "unioned.sql").write_text(
        "MODEL (name shop.unioned, kind FULL);\nSELECT * FROM (@UNION('all', shop.typed, shop.typed)) AS u\n"
    )
    loaded = load_project(project, use_cache=False)
    assert loaded.models["shop.unioned"].depends_on == frozenset({"shop.typed"})
    arguments = dict(start=datetime(2024, 1, 1), end=datetime(2024, 1, 2), execution_time=datetime(2024, 1, 2),
                     table_for=lambda name: name.replace("shop.", "p.shop__"), models=loaded.models)
    starred = render_query(loaded.models["shop.starred"], **arguments)
    assert starred == "SELECT CAST(`t`.`id` AS INT) AS `x_id`, CAST(`t`.`vehicle` AS STRING) AS `x_vehicle` FROM `p`.`shop__typed` AS t"
    unioned = render_query(loaded.models["shop.unioned"], **arguments)
    assert unioned.count("FROM `p`.`shop__typed` AS typed") == 2 and " UNION ALL " in unioned


def test_a_parameter_typed_sql_receives_the_argument_as_sql_text(tmp_path: Path):
    """``sqlmesh.SQL``: the argument's text in the model's dialect (SQLMesh's sushi example, utils.py)."""
    (tmp_path / "models").mkdir()
    (tmp_path / "macros").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
    (tmp_path / "macros" / "typed.py").write_text(
        "from sqlmesh import SQL, macro\n\n\n"
        "@macro()\n"
        "def as_text(evaluator, column: SQL, literal: SQL, name: str):\n"
        "    assert (column, literal, name) == ('CAST(revenue AS TEXT)', \"'x'\", 'b'), (column, literal, name)\n"
        "    return column\n"
    )
    (tmp_path / "models" / "m.sql").write_text(
        "MODEL (name db.m, kind FULL);\nSELECT @as_text(revenue::text, 'x', \"b\") AS t FROM db.src\n"
    )
    (tmp_path / "external_models.yaml").write_text("- name: db.src\n  columns:\n    revenue: double\n")
    assert load_project(tmp_path, use_cache=False).models["db.m"].query == "SELECT CAST(revenue AS STRING) AS t FROM db.src"
