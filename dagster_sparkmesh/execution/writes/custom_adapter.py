"""The ``adapter`` a custom materialization class writes through: SQLMesh's adapter method names, over the engine.

Only what maps onto Spark tables as this project writes them; any other method is refused with the list of these.
Every write keeps the engine's guarantees: ``replace_query`` stages the new rows before it overwrites the table
(readers see the old rows or the new ones), ``insert_append`` appends in one statement. Rows written are counted
for the run's report.

A model whose table is a lakehouse table (``table_format iceberg`` or ``delta``, as SQLMesh writes ``USING
<format>`` for a custom materialization's table too) gets tables of that format: created by their first rows in
one commit, partitioned and with properties as the model (or the call, with SQLMesh's keywords) says; replaced
whole or appended to in one commit of the format.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from dagster_sparkmesh.engine import lakehouse_tables
from dagster_sparkmesh.engine.lakehouse_tables import EXISTED, Partitioning
from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.writes.lakehouse_table import EVERYTHING, LakehouseTable, rows_written
from dagster_sparkmesh.model.table_formats import LAKEHOUSE_FORMATS
from dagster_sparkmesh.snapshot.naming import quote_identifier

QueryOrText = exp.Expression | str


@dataclass(frozen=True)
class TableSettings:
    """How the tables a class creates are made, from the model: partition columns, and for a lakehouse model its
    format and table properties."""

    partitioned_by: tuple[str, ...] = ()
    table_format: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)

    def overridden(self, settings: Mapping[str, Any]) -> TableSettings:
        """These settings with what a call passed under SQLMesh's keywords (``partitioned_by``,
        ``table_properties``, ``table_format`` / ``storage_format``) over them."""
        asked = settings.get("table_format") or settings.get("storage_format")
        if asked is not None and str(asked).lower() in LAKEHOUSE_FORMATS and str(asked).lower() != self.table_format:
            raise ExecutionError(
                f"a custom materialization asked for a {asked} table, but the model's table is "
                f"{self.table_format or 'a default-layout (parquet) table'}",
                hint=f"set table_format {str(asked).lower()} on the model (or in model_defaults)",
            )
        partitioned = settings.get("partitioned_by")
        properties = settings.get("table_properties")
        return TableSettings(
            tuple(_column(column) for column in partitioned) if partitioned is not None else self.partitioned_by,
            self.table_format,
            {str(k): _text(v) for k, v in properties.items()} if properties is not None else self.properties,
        )


class SparkMaterializationAdapter:
    """One write's adapter: the engine, how the tables it creates are made, and the rows written."""

    dialect = "spark"
    _PROVIDED = (
        "dialect", "replace_query", "insert_append", "table_exists", "columns", "execute", "fetchone", "fetchall",
        "drop_table", "create_table",
    )  # fmt: skip

    def __init__(self, ctx: ExecutionContext, settings: TableSettings = TableSettings()) -> None:
        self._ctx = ctx
        self._engine = ctx.engine
        self._settings = settings
        self.rows = 0

    def replace_query(self, table_name: str, query_or_df: QueryOrText, **settings: Any) -> None:
        """The table's rows become the query's (the table is created from it when missing)."""
        table, query, made = _name(table_name), _sql(query_or_df), self._settings.overridden(settings)
        if made.table_format:
            self.rows += self._lakehouse_write(table, query, made, whole=True)
            return
        created = None if self._engine.catalog.table_exists(table) else self._engine.creation.create_table_with_rows(
            table, query, made.partitioned_by)
        self.rows += created if created is not None else self._engine.replace_with_query(table, query)

    def insert_append(self, table_name: str, query_or_df: QueryOrText, **settings: Any) -> None:
        table, query, made = _name(table_name), _sql(query_or_df), self._settings.overridden(settings)
        if made.table_format:
            self.rows += self._lakehouse_write(table, query, made, whole=False)
            return
        created = None if self._engine.catalog.table_exists(table) else self._engine.creation.create_table_with_rows(
            table, query, made.partitioned_by)
        self.rows += created if created is not None else self._engine.append_rows(table, query)

    def create_table(self, table_name: str, target_columns_to_types: dict[str, Any], **settings: Any) -> None:
        made = self._settings.overridden(settings)
        if made.table_format:
            columns = [(name, _type(kind)) for name, kind in target_columns_to_types.items()]
            lakehouse_tables.create_lakehouse_table(
                self._engine.catalog.spark, _name(table_name), columns, made.table_format,
                Partitioning(columns=made.partitioned_by), made.properties,
            )
            return
        columns = ", ".join(f"CAST(NULL AS {_type(kind)}) AS {quote_identifier(name)}" for name, kind in target_columns_to_types.items())
        self._engine.creation.create_table_like_query(_name(table_name), f"SELECT {columns} WHERE 1 = 0", made.partitioned_by)

    def _lakehouse_write(self, table: str, query: str, made: TableSettings, *, whole: bool) -> int:
        """One commit of the format: the table created holding the query's rows when it is missing, else the
        rows replacing the whole table (``whole``) or appended to it. Returns the rows written."""
        spark, select = self._engine.catalog.spark, f"SELECT * FROM ({query}) AS source"
        written = EXISTED
        if not self._engine.catalog.table_exists(table):
            written = lakehouse_tables.create_table_as(
                spark, table, select, made.table_format, Partitioning(columns=made.partitioned_by), made.properties
            )
        created = written is not EXISTED
        if not created:
            written = (lakehouse_tables.overwrite_where(spark, table, select, EVERYTHING) if whole
                       else lakehouse_tables.append_rows(spark, table, select))
        described = LakehouseTable(made.table_format, exists=True, created=created)
        return rows_written(self._ctx, described, table, select, written, whole_table=whole or created)

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


def _column(column: object) -> str:
    """A partition column's name, from SQLMesh's column expressions or text."""
    return column.name if isinstance(column, (exp.Column, exp.Identifier)) else str(column)


def _text(value: object) -> str:
    """A table property's value as text (SQLMesh hands sqlglot literals)."""
    if isinstance(value, exp.Literal):
        return value.this
    if isinstance(value, exp.Expression):
        return value.sql(dialect="spark")
    return "true" if value is True else "false" if value is False else str(value)
