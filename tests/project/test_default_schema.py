"""Names without a schema: SQLMesh puts a model named ``spy_seed`` in the schema ``default`` (its table in
``sqlmesh__default``, its views ``default.spy_seed`` and ``default__<env>.spy_seed``), and ``FROM spy_seed`` reads
it. A user's project named every model so and did not load (``invalid model name 'base_numbers'``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
import sqlglot

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.plan.selectors import select_models
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import render_query
from dagster_sparkmesh.project.sql.references import query_references
from dagster_sparkmesh.snapshot.naming import physical_table, view_name

_PYTHON_MODEL = '''
import typing as t
from sqlmesh import model

@model("py_model", columns={"n": "int"}, depends_on=["doubled"])
def execute(context, **kwargs: t.Any):
    return context.fetchdf(f"SELECT n2 AS n FROM {context.resolve_table('doubled')}")
'''

_FILES = {
    "config.yaml": "model_defaults:\n  dialect: duckdb\n",
    "seeds/spy.csv": "n\n1\n2\n",
    "models/spy_seed.sql": "MODEL (name spy_seed, kind SEED (path '../seeds/spy.csv'), columns (n int));\n",
    # The CTE shadows the model it reads: inside its own definition, spy_seed is the model.
    "models/doubled.sql": "MODEL (name doubled, kind FULL);\n"
                          "WITH spy_seed AS (SELECT n FROM spy_seed)\nSELECT n * 2 AS n2 FROM spy_seed\n",
    "models/ext_read.sql": "MODEL (name `Ext_Read`, kind FULL, depends_on [doubled]);\nSELECT x FROM ext_t\n",
    "models/py_model.py": _PYTHON_MODEL,
    "external_models.yaml": "- name: ext_t\n  columns:\n    x: int\n",
    "audits/positive.sql": "AUDIT (name all_positive, standalone true);\nSELECT * FROM doubled WHERE n2 <= 0\n",
    "tests/test_doubled.yaml": "test_doubled:\n  model: doubled\n  inputs:\n    spy_seed:\n      rows:\n"
                               "        - n: 5\n  outputs:\n    query:\n      rows:\n        - n2: 10\n",
}


def _project(root: Path, files: dict[str, str] = _FILES) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_models_named_without_a_schema_are_in_the_schema_default(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path), use_cache=False)
    assert sorted(project.models) == ["default.doubled", "default.ext_read", "default.py_model", "default.spy_seed"]
    assert sorted(project.external_models) == ["default.ext_t"]
    assert project.models["default.doubled"].depends_on == {"default.spy_seed"}
    assert project.models["default.ext_read"].depends_on == {"default.doubled", "default.ext_t"}
    assert project.models["default.py_model"].depends_on == {"default.doubled"}
    assert [test.model for test in project.unit_tests] == ["default.doubled"]
    assert project.standalone_audits["all_positive"].depends_on == {"default.doubled"}
    assert select_models(project.models, ["doubled+"]) == ("default.doubled", "default.ext_read", "default.py_model")


def test_tables_and_views_of_a_model_without_a_schema_are_sqlmeshs() -> None:
    # SQLMesh 0.236.4: sqlmesh__default.doubled__<version>, views default.doubled and default__dev.doubled.
    assert physical_table("default.doubled", "v1") == "sparkmesh__default.default__doubled__v1"
    assert view_name("default.doubled", "prod") == "default.doubled"
    assert view_name("default.doubled", "dev") == "default__dev.doubled"


def test_a_bare_reference_reads_the_model_and_a_cte_of_its_name_stays_a_cte(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path), use_cache=False)
    rendered = render_query(
        project.models["default.doubled"], start=datetime(2024, 1, 1), end=datetime(2024, 1, 2),
        execution_time=datetime(2024, 1, 2), table_for={"default.spy_seed": "sparkmesh__default.spy_1"},
        models=project.models,
    )
    assert rendered == ("WITH spy_seed AS (SELECT n FROM `sparkmesh__default`.`spy_1` AS spy_seed) "
                        "SELECT n * 2 AS n2 FROM spy_seed")


def test_an_unqualified_table_no_one_declares_is_an_external_table_in_default(tmp_path: Path) -> None:
    # SQLMesh leaves it to the engine's current schema, which is Spark's database default.
    files = {"config.yaml": "model_defaults:\n  dialect: duckdb\n",
             "models/m.sql": "MODEL (name db.m, kind FULL);\nSELECT o.id\nFROM orders AS o\n"}
    project = load_project(_project(tmp_path, files), use_cache=False)
    assert project.models["db.m"].depends_on == {"default.orders"}
    assert list(project.external_models) == ["default.orders"]
    assert any(warning.startswith("m.sql:3: db.m reads default.orders") for warning in project.warnings)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("SELECT * FROM orders JOIN shop.items USING (id)", ["default.orders", "shop.items"]),
        ("WITH orders AS (SELECT * FROM orders) SELECT * FROM orders", ["default.orders"]),
        # A CTE is in scope after its definition only: ``a`` reads the table b, the query the CTE b.
        ("WITH a AS (SELECT 1 AS x FROM b), b AS (SELECT * FROM a) SELECT * FROM b", ["default.b"]),
        ("WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT * FROM r", []),
        # The CTE of a subquery is not in scope outside it.
        ("SELECT * FROM (WITH c AS (SELECT 1 AS x) SELECT * FROM c) AS s JOIN c USING (x)", ["default.c"]),
        ("SELECT * FROM `default`.orders", ["default.orders"]),
        # A statement's schema name is no table (a model's `USE scratch` was rendered as `USE default.scratch`).
        ("USE scratch", []),
        ("CREATE SCHEMA IF NOT EXISTS scratch", []),
        ("DROP DATABASE scratch CASCADE", []),
    ],
)
def test_bare_references_are_in_the_schema_default_unless_they_name_a_cte(query: str, expected: list[str]) -> None:
    assert [reference.name for reference in query_references(sqlglot.parse_one(query, dialect="spark"), query)] == expected


@pytest.mark.parametrize(
    ("header", "column"),
    [("MODEL (name a.b.c.d, kind FULL);", 13), ("MODEL (name shop., kind FULL);", 13), ("MODEL (name `a b`, kind FULL);", 13)],
)
def test_genuinely_invalid_names_are_still_refused_with_file_line_and_column(
    tmp_path: Path, header: str, column: int
) -> None:
    files = {"config.yaml": "model_defaults:\n  dialect: duckdb\n", "models/m.sql": f"\n{header}\nSELECT 1 AS x\n"}
    with pytest.raises(ProjectError, match="invalid model name") as caught:
        load_project(_project(tmp_path, files), use_cache=False)
    assert (caught.value.path.name, caught.value.line, caught.value.col) == ("m.sql", 2, column)
    assert "schema default" in (caught.value.hint or "")


def test_a_statements_schema_name_is_rendered_as_written() -> None:
    from dagster_sparkmesh.project.query_tables import qualified_reference

    for statement in ("USE scratch", "CREATE SCHEMA scratch", "DROP SCHEMA scratch"):
        table = sqlglot.parse_one(statement, dialect="spark").find(sqlglot.exp.Table)
        assert qualified_reference(table) is None, statement
    assert qualified_reference(sqlglot.parse_one("DROP TABLE scratch", dialect="spark").find(sqlglot.exp.Table)) == (
        "default.scratch")
