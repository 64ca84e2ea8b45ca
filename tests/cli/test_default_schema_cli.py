"""A project whose models are named without a schema (``MODEL (name spy_seed, ...)``, ``@model("py_model")``), as
a user's SQLMesh project names them: built on Spark in its ``default`` database, as SQLMesh 0.236.4 builds it
(``SELECT * FROM "default".doubled`` returns 2, 4; a dev environment's view is ``default__dev.doubled``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.sparkmesh_harness import invoke


_PYTHON_MODEL = '''
import typing as t
from sqlmesh import model

@model("py_model", columns={"n": "int"}, depends_on=["doubled"])
def execute(context, **kwargs: t.Any):
    return context.spark.sql(f"SELECT n2 AS n FROM {context.resolve_table('doubled')}")
'''

_VIEWS = ("default.spy_seed", "default.doubled", "default.py_model")


def _project(folder: Path, extra_column: str = "") -> Path:
    files = {
        "config.yaml": "model_defaults:\n  dialect: duckdb\n  start: '2024-01-01'\n",
        "seeds/spy.csv": "n\n1\n2\n",
        "models/spy_seed.sql": "MODEL (name spy_seed, kind SEED (path '../seeds/spy.csv'), columns (n int));\n",
        "models/doubled.sql": "MODEL (name doubled, kind FULL);\n"
                              f"WITH spy_seed AS (SELECT n FROM spy_seed)\nSELECT n * 2 AS n2{extra_column} FROM spy_seed\n",
        "models/py_model.py": _PYTHON_MODEL,
        "tests/test_doubled.yaml": "test_doubled:\n  model: doubled\n  inputs:\n    spy_seed:\n      rows:\n"
                                   "        - n: 5\n  outputs:\n    query:\n      partial: true\n      rows:\n"
                                   "        - n2: 10\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def default_views(spark, clean_catalog):
    """The views land in Spark's ``default`` database, which the catalog cleanup keeps: dropped here."""
    yield
    for view in _VIEWS:
        spark.sql(f"DROP VIEW IF EXISTS {view}")


def _rows(spark, sql: str) -> list[tuple]:
    return [tuple(row) for row in spark.sql(sql).collect()]


def test_models_without_a_schema_are_built_in_the_default_database(tmp_path, spark, engine, default_views):
    project = _project(tmp_path / "p")
    plan, _ = invoke(project, ["plan", "--auto-apply", "--no-prompts", "--end", "2024-01-02"], engine)
    assert plan.exit_code == 0, plan.output
    assert _rows(spark, "SELECT * FROM `default`.doubled ORDER BY 1") == [(2,), (4,)]
    assert _rows(spark, "SELECT * FROM `default`.py_model ORDER BY 1") == [(2,), (4,)]
    tables = {row.tableName for row in spark.sql("SHOW TABLES IN sparkmesh__default").collect()}
    assert any(table.startswith("default__doubled__") for table in tables), tables

    rendered, _ = invoke(project, ["render", "doubled"], engine)
    assert rendered.exit_code == 0, rendered.output
    assert "`sparkmesh__default`.`default__spy_seed__" in rendered.output and "FROM spy_seed" in rendered.output

    tested, _ = invoke(project, ["test", "doubled"], engine)
    assert tested.exit_code == 0 and "PASS test_doubled (default.doubled)" in tested.output, tested.output

    _project(project, extra_column=", 1 AS one")
    dev, _ = invoke(project, ["plan", "dev", "--auto-apply", "--no-prompts", "--end", "2024-01-02"], engine)
    assert dev.exit_code == 0, dev.output
    assert _rows(spark, "SELECT * FROM default__dev.doubled ORDER BY 1") == [(2, 1), (4, 1)]
    assert _rows(spark, "SELECT * FROM `default`.doubled ORDER BY 1") == [(2,), (4,)]  # prod is untouched
