from __future__ import annotations

import pytest

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.sqlmesh_api.execution_context import ExecutionContext


class FakeSpark:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def sql(self, text: str) -> str:
        self.queries.append(text)
        return text


def _context() -> ExecutionContext:
    tables = {"db.parent": "sparkmesh__db.parent__v1"}
    return ExecutionContext(spark=FakeSpark(), table_for=lambda name: tables[name], variables={"limit": 3},
                            blueprint_variables={"customer": "acme"}, gateway="spark")


def test_tables_resolve_to_physical_names_however_written() -> None:
    context = _context()
    assert context.resolve_table("db.parent") == context.table("`DB`.`Parent`") == "sparkmesh__db.parent__v1"


def test_queries_run_on_spark_as_text_or_sqlglot() -> None:
    from sqlglot import exp

    context = _context()
    context.fetch_pyspark_df(exp.select("a").from_(context.table("db.parent")), quote_identifiers=True)
    assert context.spark.queries == ["SELECT a FROM sparkmesh__db.parent__v1"]


def test_variables() -> None:
    context = _context().with_variables({"extra": 1}, {"region": "eu"})
    assert (context.var("LIMIT"), context.var("extra"), context.var("missing", "d")) == (3, 1, "d")
    assert (context.blueprint_var("customer"), context.blueprint_var("region")) == ("acme", "eu")
    assert context.gateway == "spark" and context.default_catalog is None


def test_engine_adapter_has_only_its_dialect_and_says_what_to_use() -> None:
    assert _context().engine_adapter.dialect == "spark"  # sushi builds its SQL with it
    with pytest.raises(ExecutionError, match="use context.spark"):
        _context().engine_adapter.fetchdf  # noqa: B018
