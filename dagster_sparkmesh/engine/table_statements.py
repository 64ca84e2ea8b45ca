"""The statements a table layout's writes need (``engine.period_tables``): protocols, so the layout modules depend on
this narrow seam rather than on ``SparkEngine`` or its parts, which use them (no import cycle). ``TableCreation``
(``engine.table_creation``) satisfies ``TableStatements``, and its ``SparkCatalog`` the ``CatalogStatements``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pyspark.sql import SparkSession

from dagster_sparkmesh.engine.counted_writes import RowChecks


class CatalogStatements(Protocol):
    spark: SparkSession

    def execute(self, sql: str) -> None: ...

    def query_rows(self, sql: str) -> list[tuple]: ...

    def view_text(self, qualified: str) -> str | None: ...

    def create_or_alter_view(self, view: str, select_sql: str, known_missing: bool = False) -> None: ...

    def alter_view(self, view: str, select_sql: str) -> None: ...


class TableStatements(Protocol):
    @property
    def spark(self) -> SparkSession: ...

    @property
    def catalog(self) -> CatalogStatements: ...

    def create_empty_table(self, table: str, statement: str) -> bool: ...

    def create_table_from_select(
        self, table: str, select_sql: str, partitioned_by: Sequence[str] = (), checks: RowChecks | None = None
    ) -> int | None: ...
