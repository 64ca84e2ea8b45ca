"""Names qualified with the default catalog of the project's (DuckDB) gateway, as SQLMesh resolves them: ibis's
``local.ibis.incremental_model`` is ``ibis.incremental_model`` when the gateway's default catalog is ``local``.
On Spark that catalog means nothing: it is dropped when the model loads, so the query reads the model's table."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.project.config.loader import load_config
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import render_query

GATEWAYS = {
    "catalogs": "gateways:\n  my_gateway:\n    connection:\n      type: duckdb\n      catalogs:\n"
                "        local: 'data/local.duckdb'\n",
    "database": "gateways:\n  g:\n    connection:\n      type: duckdb\n      database: db.duckdb\n",
    "memory": "gateways:\n  g:\n    connection:\n      type: duckdb\n",
}


def _project(root: Path, gateways: str, reader_sql: str) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "config.yaml").write_text(gateways + "model_defaults:\n  dialect: duckdb\n")
    (root / "models" / "src.sql").write_text("MODEL (name ibis.src, kind FULL);\nSELECT 1 AS id\n")
    (root / "models" / "reader.sql").write_text(f"MODEL (name ibis.reader, kind FULL);\n{reader_sql}\n")
    return root


@pytest.mark.parametrize(("gateways", "catalog"), [("catalogs", "local"), ("database", "db"), ("memory", "memory")])
def test_the_gateways_default_catalog(tmp_path: Path, gateways: str, catalog: str) -> None:
    root = _project(tmp_path, GATEWAYS[gateways], "SELECT 1 AS x")
    assert load_config(root).config.default_catalog == catalog


def test_a_reference_with_the_default_catalog_is_the_model(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path, GATEWAYS["catalogs"], "SELECT id FROM local.ibis.src"), use_cache=False)
    reader = project.models["ibis.reader"]
    assert reader.depends_on == frozenset({"ibis.src"}) and not project.external_models
    sql = render_query(reader, start=datetime(2024, 1, 1), end=datetime(2024, 1, 2), execution_time=datetime(2024, 1, 2),
                       table_for=lambda name: name, models=project.models)
    assert "local" not in sql and "ibis.src" in sql.replace("`", "")


def test_an_is_sql_python_model_naming_the_default_catalog(tmp_path: Path) -> None:
    root = _project(tmp_path, GATEWAYS["catalogs"], "SELECT 1 AS x")
    (root / "models" / "py_reader.py").write_text(
        "from sqlmesh import model\n"
        "@model('ibis.py_reader', is_sql=True, kind='FULL')\n"
        "def entrypoint(evaluator):\n"
        "    return 'SELECT id FROM \"local\".\"ibis\".\"src\"'\n"
    )
    project = load_project(root, use_cache=False)
    assert project.models["ibis.py_reader"].depends_on == frozenset({"ibis.src"})


def test_external_models_and_unit_tests_named_with_the_default_catalog_are_the_projects(tmp_path: Path) -> None:
    # What `sqlmesh create_external_models` writes on a DuckDB gateway, and unit tests written the same way: SQLMesh
    # 0.236.4 loads this project and passes the test.
    root = _project(tmp_path, GATEWAYS["database"], "SELECT id, amount FROM raw.events")
    (root / "external_models.yaml").write_text("- name: '\"db\".\"raw\".\"events\"'\n  columns:\n    id: INT\n    amount: DOUBLE\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_reader.yaml").write_text(
        "test_reader:\n  model: '\"db\".\"ibis\".\"reader\"'\n  inputs:\n    '\"db\".\"raw\".\"events\"':\n"
        "      rows:\n        - {id: 1, amount: 2.5}\n  outputs:\n    query:\n      rows:\n        - {id: 1, amount: 2.5}\n"
    )
    project = load_project(root, use_cache=False)
    assert list(project.external_models) == ["raw.events"]
    assert project.external_models["raw.events"].columns == (("id", "INT"), ("amount", "DOUBLE"))
    (test,) = project.unit_tests
    assert (test.model, [name for name, _ in test.inputs]) == ("ibis.reader", ["raw.events"])
    assert project.models["ibis.reader"].depends_on == {"raw.events"}
