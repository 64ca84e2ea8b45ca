"""The ``adapter`` a custom materialization class writes through: SQLMesh's adapter method names, over the engine.

Only what maps onto Spark tables as this project writes them; any other method is refused with the list of these.
Every write keeps the engine's guarantees: ``replace_query`` stages the new rows before it overwrites the table
(readers see the old rows or the new ones), ``insert_append`` appends in one statement. Rows written are counted
for the run's report.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlglot import exp

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.snapshot.naming import quote_identifier

QueryOrText = exp.Expression | str


class SparkMaterializationAdapter:
    """One write's adapter: the engine, the model's partition columns for tables it creates, and the rows written."""

    dialect = "spark"
    _PROVIDED = (
        "dialect", "replace_query", "insert_append", "table_exists", "columns", "execute", "fetchone", "fetchall",
        "drop_table", "create_table",
    )  # fmt: skip

    def __init__(self, ctx: ExecutionContext, partitioned_by: Iterable[str] = ()) -> None:
        self._engine = ctx.engine
        self._partitioned_by = list(partitioned_by)
        self.rows = 0

    def replace_query(self, table_name: str, query_or_df: QueryOrText, **_settings: Any) -> None:
        """The table's rows become the query's (the table is created from it when missing)."""
        table, query = _name(table_name), _sql(query_or_df)
        created = None if self._engine.catalog.table_exists(table) else self._engine.creation.create_table_with_rows(
            table, query, self._partitioned_by)
        self.rows += created if created is not None else self._engine.replace_with_query(table, query)

    def insert_append(self, table_name: str, query_or_df: QueryOrText, **_settings: Any) -> None:
        table, query = _name(table_name), _sql(query_or_df)
        created = None if self._engine.catalog.table_exists(table) else self._engine.creation.create_table_with_rows(
            table, query, self._partitioned_by)
        self.rows += created if created is not None else self._engine.append_rows(table, query)

    def create_table(self, table_name: str, target_columns_to_types: dict[str, Any], **_settings: Any) -> None:
        columns = ", ".join(f"CAST(NULL AS {_type(kind)}) AS {quote_identifier(name)}" for name, kind in target_columns_to_types.items())
        self._engine.creation.create_table_like_query(_name(table_name), f"SELECT {columns} WHERE 1 = 0", self._partitioned_by)

    def table_exists(self, table_name: str) -> bool:
        return self._engine.catalog.table_exists(_name(table_name))

    def columns(self, table_name: str, include_pseudo_columns: bool = False) -> dict[str, exp.DataType]:
        return {name: exp.DataType.build(kind, dialect="spark") for name, kind in self._engine.catalog.columns(_name(table_name))}

    def execute(self, expressions: QueryOrText | list[QueryOrText], **_settings: Any) -> None:
        for expression in expressions if isinstance(expressions, list) else [expressions]:
            self._engine.catalog.execute(_sql(expression))

    def fetchall(self, query: QueryOrText, **_settings: Any) -> list[tuple]:
        return self._engine.catalog.query_rows(_sql(query))

    def fetchone(self, query: QueryOrText, **_settings: Any) -> tuple | None:
        rows = self.fetchall(query)
        return rows[0] if rows else None

    def drop_table(self, table_name: str, exists: bool = True, **_settings: Any) -> None:
        if exists and not self._engine.catalog.table_exists(_name(table_name)):
            return
        self._engine.catalog.drop_table(_name(table_name))

    def __getattr__(self, name: str) -> Any:
        # An AttributeError, so that ``getattr(adapter, name, default)`` in a class still works; its message is what
        # the model's error shows when the class calls the method.
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"custom materialization called adapter.{name}, which sparkmesh's Spark adapter does not provide "
            f"(available: {', '.join(self._PROVIDED)}; or run SQL through adapter.execute)"
        )


def _sql(query: QueryOrText) -> str:
    if isinstance(query, str):
        return query
    if isinstance(query, exp.Expression):
        return query.sql(dialect="spark")
    raise ExecutionError(
        f"custom materialization passed a {type(query).__name__} where sparkmesh takes a query",
        hint="pass the query_or_df it received, a sqlglot expression or SQL text",
    )


def _name(table: object) -> str:
    return table.sql(dialect="spark") if isinstance(table, exp.Expression) else str(table)


def _type(kind: object) -> str:
    return kind.sql(dialect="spark") if isinstance(kind, exp.Expression) else str(kind)
