"""A project written against SQLMesh's documented Python API only: it loads, plans and applies on Spark unchanged."""

from __future__ import annotations

import json
import shutil
import sys
from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.state.store import open_state_store

FIXTURE = Path(__file__).parent / "fixtures" / "sqlmesh_python"
START, END = datetime(2024, 1, 1), datetime(2024, 1, 3)

# What SQLMesh documents for this project: parents from context.resolve_table/context.table, SQL references.
EXPECTED_DAG = {
    "smpy_raw.customers": set(),
    "smpy_raw.orders": set(),
    "smpy_shop.nothing": set(),
    "smpy_shop.order_totals": {"smpy_raw.customers", "smpy_raw.orders"},
    "smpy_shop.daily": {"smpy_shop.order_totals"},
    "smpy_shop.orders_ada": {"smpy_raw.orders"},
    "smpy_shop.orders_grace": {"smpy_raw.orders"},
    "smpy_shop.customer_count": {"smpy_raw.customers"},
}


# SQLMesh 0.236.4's own reading of the fixture (Context(paths=...).models: name -> sorted depends_on), recorded
# once in a separate virtualenv with `pip install sqlmesh`; SQLMesh loaded every file unchanged.
SQLMESH_DAG = Path(__file__).parent / "fixtures" / "sqlmesh_python_dag.json"
PERSONAL_OVERLAY = Path(__file__).parent / "fixtures" / "sqlmesh_home"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SQLMESH_HOME", str(PERSONAL_OVERLAY))  # the Spark gateway, as a user's ~/.sqlmesh holds it
    return Path(shutil.copytree(FIXTURE, tmp_path / "project", ignore=shutil.ignore_patterns(".sparkmesh")))


def test_the_dag_is_the_one_sqlmesh_itself_built() -> None:
    recorded = json.loads(SQLMESH_DAG.read_text())
    unqualified = {name: {parent.replace('"', "").split(".", 1)[1] for parent in parents} for name, parents in recorded.items()}
    assert unqualified == EXPECTED_DAG


def test_loads_with_the_dag_sqlmesh_documents(project: Path) -> None:
    loaded = load_project(project, use_cache=False)

    assert {name: set(model.depends_on) for name, model in loaded.models.items()} == EXPECTED_DAG
    assert loaded.config.default_gateway == "spark" and loaded.config.connection.config == {"spark.sql.shuffle.partitions": "2"}
    assert any("gateway 'duck' connects to duckdb" in warning for warning in loaded.warnings)
    orders = loaded.models["smpy_raw.orders"]
    assert orders.kind.name == "INCREMENTAL_BY_TIME_RANGE" and orders.kind.time_column == "ds"
    assert orders.grains == ("order_id",) and orders.description == "Orders, one a day per customer"
    assert orders.python_code == (project / "models" / "raw_orders.py").read_text()
    assert loaded.models["smpy_raw.customers"].kind.name == "FULL"
    assert loaded.models["smpy_shop.order_totals"].columns[0] == ("name", "STRING")  # duckdb's text
    assert "CAST(SUM(total) AS DOUBLE) / 2" in (loaded.models["smpy_shop.daily"].query or "")  # a Python macro, used from SQL


def test_loads_the_same_with_an_installed_sqlmesh(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real SQLMesh in the environment (imported by the host, even) changes nothing and is left in place."""
    site = tmp_path / "site" / "sqlmesh"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("def model(*args, **kwargs):\n    raise AssertionError('the real sqlmesh was used')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    import sqlmesh

    try:
        loaded = load_project(project, use_cache=False)
        assert {name: set(model.depends_on) for name, model in loaded.models.items()} == EXPECTED_DAG
        assert sys.modules["sqlmesh"] is sqlmesh
    finally:
        sys.modules.pop("sqlmesh", None)


def test_native_spelling(tmp_path: Path) -> None:
    from dagster_sparkmesh import macro, model, signal

    assert callable(macro) and callable(model) and callable(signal)


def test_an_edited_helper_module_changes_the_fingerprint_of_its_users(project: Path) -> None:
    before = load_project(project, use_cache=False).models
    (project / "macros" / "utils.py").write_text("AMOUNT_PER_DAY = 11\n")
    after = load_project(project, use_cache=False).models

    assert after["smpy_raw.orders"].fingerprint != before["smpy_raw.orders"].fingerprint
    assert after["smpy_raw.customers"].fingerprint == before["smpy_raw.customers"].fingerprint


def test_plans_and_applies_on_spark(project: Path, spark, engine, clean_catalog) -> None:
    store = open_state_store(None, project)
    try:
        ctx = ExecutionContext(
            project=load_project(project), state=store, environment="prod",
            engine_factory=lambda: engine, clock=lambda: END,
        )  # fmt: skip
        apply_plan(ctx, plan_for(ctx, START, END))
    finally:
        store.close()

    rows = lambda sql: sorted(tuple(row) for row in spark.sql(sql).collect())  # noqa: E731
    # 2 days x 10 x 0.5 (the discount variable), halved by the Python macro @halve
    assert rows("SELECT name, total FROM smpy_shop.daily") == [("ada", 5.0), ("grace", 5.0)]
    assert rows("SELECT COUNT(*) FROM smpy_raw.orders") == [(4,)]
    assert rows("SELECT COUNT(*) FROM smpy_shop.nothing") == [(0,)]
    assert rows("SELECT n FROM smpy_shop.orders_grace") == [(2,)]  # a blueprint's variable, one order a day
    assert rows("SELECT n FROM smpy_shop.customer_count") == [(2,)]  # is_sql: the function wrote the query


def test_a_udf_defined_in_a_model_file_runs_on_spark(tmp_path: Path, spark) -> None:
    """Spark's Python workers cannot import the model file by name: its functions must travel by value."""
    from dagster_sparkmesh.project.config import ModelDefaults
    from dagster_sparkmesh.project.python.models import load_python_model, resolve_python_entrypoint
    from dagster_sparkmesh.sqlmesh_api.execution_context import ExecutionContext as ModelContext

    (tmp_path / "models").mkdir()
    (tmp_path / "helper.py").write_text("def plus_one(x):\n    return x + 1\n")
    path = tmp_path / "models" / "m.py"
    path.write_text(
        "from sqlmesh import model\nfrom helper import plus_one\n\n\ndef twice(x):\n    return plus_one(x) * 2\n\n\n"
        "@model('db.m', columns={'x': 'int'})\ndef execute(context, start, end, execution_time, **kwargs):\n"
        "    from pyspark.sql import functions as F\n\n"
        "    return context.spark.range(3).select(F.udf(twice, 'int')(F.col('id').cast('int')).alias('x'))\n"
    )
    function = resolve_python_entrypoint(load_python_model(path, ModelDefaults()).python_entrypoint or "")
    frame = function(context=ModelContext(spark=spark, table_for=str), start=START, end=END, execution_time=END)

    assert sorted(row.x for row in frame.collect()) == [2, 4, 6]


def test_resolved_table_names_read_back_in_sqlglots_default_dialect() -> None:
    from sqlglot import exp

    from dagster_sparkmesh.execution.python_runner import table_reference

    assert table_reference("sparkmesh__shop.orders__1a2b") == "sparkmesh__shop.orders__1a2b"
    assert table_reference("shop.select") == "shop.`select`" and table_reference("a.1x") == "a.`1x`"
    assert exp.select("*").from_(table_reference("sparkmesh__shop.orders__1a2b")).sql("spark").endswith("orders__1a2b")
