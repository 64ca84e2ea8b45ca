"""A unit test that gives inputs must give one for every table its model reads, as in SQLMesh ("Incomplete test,
missing input model"); one that gives none runs where no table exists. The warehouse here holds the tables the
tests leave out, with the very rows the tests expect: a test that read them would pass, so a failure shows that
no test reads the warehouse."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.execution.unit_tests import run_unit_tests
from dagster_sparkmesh.model.records import UnitTest
from dagster_sparkmesh.project.checks.unit_tests import incomplete_inputs

EXTERNALS = """
- name: raw.orders
  columns: {id: int, amount: int}
- name: raw.customers
  columns: {id: int, name: string}
"""

ENRICHED = """MODEL (name shop.enriched, kind FULL);
SELECT o.id, o.amount, c.name FROM raw.orders AS o JOIN raw.customers AS c ON o.id = c.id
"""

LIFETIME = """MODEL (
  name shop.lifetime,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds),
  columns (id INT, total INT, ds DATE)
);
WITH today AS (SELECT id, SUM(amount) AS total FROM raw.orders GROUP BY id),
prev AS (SELECT id, total FROM shop.lifetime WHERE ds = @end_ds::DATE - INTERVAL 1 DAY)
SELECT COALESCE(t.id, p.id)::INT AS id, (COALESCE(t.total, 0) + COALESCE(p.total, 0))::INT AS total,
  @end_ds::DATE AS ds
FROM today AS t FULL OUTER JOIN prev AS p ON t.id = p.id
"""

CONSTANT = """MODEL (name shop.constant, kind FULL);
SELECT 1 AS one
"""

PYTHON_MODEL = '''
from sqlmesh import model


@model("shop.py_enriched", kind="FULL", columns={"id": "int", "name": "string"})
def execute(context, start, end, execution_time, **kwargs):
    orders, customers = context.resolve_table("raw.orders"), context.resolve_table("raw.customers")
    return context.fetchdf(f"SELECT o.id, c.name FROM {orders} AS o JOIN {customers} AS c ON o.id = c.id")
'''

TESTS = """
test_customers_left_out:
  model: shop.enriched
  inputs:
    raw.orders: [{id: 1, amount: 10}]
  outputs:
    query: [{id: 1, amount: 10, name: ann}]

test_every_input:
  model: shop.enriched
  inputs:
    raw.orders: [{id: 1, amount: 10}]
    raw.customers:
      query: SELECT 1 AS id, 'bob' AS name
  outputs:
    query: [{id: 1, amount: 10, name: bob}]

test_own_table_left_out:
  model: shop.lifetime
  vars: {start: 2024-01-02, end: 2024-01-02}
  inputs:
    raw.orders: [{id: 1, amount: 3}]
  outputs:
    query: [{id: 1, total: 3, ds: 2024-01-02}]

test_no_inputs:
  model: shop.enriched
  outputs:
    query: [{id: 1, amount: 10, name: ann}]

test_no_inputs_reading_nothing:
  model: shop.constant
  outputs:
    query: [{one: 1}]

test_python_model_customers_left_out:
  model: shop.py_enriched
  inputs:
    raw.orders: [{id: 1, amount: 10}]
  outputs:
    query: [{id: 1, name: ann}]
"""


def _project(path: Path) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "tests").mkdir()
    (path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n  start: '2024-01-01'\n")
    (path / "external_models.yaml").write_text(EXTERNALS)
    for name, text in [("enriched.sql", ENRICHED), ("lifetime.sql", LIFETIME), ("constant.sql", CONSTANT),
                       ("py_enriched.py", PYTHON_MODEL)]:
        (path / "models" / name).write_text(text)
    (path / "tests" / "test_inputs.yaml").write_text(TESTS)
    return path


def test_a_test_leaving_out_a_table_its_model_reads_fails_without_reading_it(
    tmp_path, make_context, clean_catalog, spark
):
    spark.sql("CREATE DATABASE raw")
    spark.sql("CREATE TABLE raw.orders AS SELECT 1 AS id, 10 AS amount")
    spark.sql("CREATE TABLE raw.customers AS SELECT 1 AS id, 'ann' AS name")
    project = _project(tmp_path / "p")
    results = {result.name: result for result in run_unit_tests(make_context(project))}
    test_file = project / "tests" / "test_inputs.yaml"

    assert {name: result.passed for name, result in results.items()} == {
        "test_customers_left_out": False,
        "test_every_input": True,
        "test_own_table_left_out": True,  # its own table is empty, as in SQLMesh
        "test_no_inputs": False,
        "test_no_inputs_reading_nothing": True,
        "test_python_model_customers_left_out": False,
    }
    assert results["test_customers_left_out"].message == (
        f"error: {test_file}: incomplete test test_customers_left_out, missing input model raw.customers (a test "
        "that gives inputs must give one for every table its model reads, as in SQLMesh)"
    )
    assert "missing input model raw.customers" in results["test_python_model_customers_left_out"].message
    assert results["test_no_inputs"].message == (
        f"error: {test_file}: test test_no_inputs gives no inputs, and its model reads raw.customers, raw.orders: "
        "as in SQLMesh, whose test database is empty, the test has no such table (give each as an input)"
    )
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("sparkmesh_test_")]


def _test(inputs=(), queries=()) -> UnitTest:
    return UnitTest(name="t", model="s.m", inputs=inputs, input_queries=queries, expected_rows=(), path=Path("t.yaml"))


def test_which_tests_are_incomplete():
    parents = {"raw.orders", "raw.customers"}
    given_both = _test(inputs=(("raw.orders", ()),), queries=(("raw.customers", "SELECT 1 AS id"),))
    assert incomplete_inputs(given_both, parents, reads_itself=True) is None  # its own table: empty
    bare_names = _test(inputs=(("orders", ()), ("customers", ())))  # they feed tables named so, not raw.*
    assert "missing input models raw.customers, raw.orders" in incomplete_inputs(bare_names, parents, False)
    assert incomplete_inputs(_test(), set(), reads_itself=False) is None
    assert "its model reads s.m:" in incomplete_inputs(_test(), set(), reads_itself=True)
