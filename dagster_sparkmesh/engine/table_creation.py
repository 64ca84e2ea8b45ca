"""TableCreation: how the executor's tables come into being: a CTAS holding a query's rows, an empty table with a
query's columns, the table of a time-range model (a period table, created by its first write, or a table partitioned
by its time column), and what a creation that meets a rival or a crash's leftovers does.

It holds the ``SparkCatalog`` it runs statements through and the engine's ``PeriodLayouts`` (it remembers the layout
of a period table it creates), rather than inheriting either: ``SparkEngine`` (``engine.adapter``) is composed of
these parts and reaches this one as ``engine.creation``. It is also what the layout modules receive as their
``TableStatements`` (``engine.table_statements``).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlparse

from pyspark.sql import SparkSession

from dagster_sparkmesh.engine.catalog import SparkCatalog
from dagster_sparkmesh.engine.counted_writes import RowChecks, create_counting
from dagster_sparkmesh.engine.failures import error_class
from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.engine.period_layouts import PeriodLayouts
from dagster_sparkmesh.engine.period_tables import (
    PERIOD_TIME_TYPES, PeriodLayout, create_period_table, create_period_table_with_rows,
)
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.snapshot.naming import quote, quote_identifier


class TableCreation:
    """Creating tables through ``catalog``; a period table's layout is remembered in ``layouts``."""

    def __init__(self, catalog: SparkCatalog, layouts: PeriodLayouts) -> None:
        self.catalog = catalog
        self._layouts = layouts
        # (column, type) in table order of the tables ``create_interval_table`` just created, for the fresh write
        # that follows (``take_created_layout``): it need not ask the catalog for a layout this engine wrote itself
        # a moment ago.
        self._created_layouts: dict[str, list[tuple[str, str]]] = {}

    @property
    def spark(self) -> SparkSession:
        return self.catalog.spark

    def take_created_layout(self, table: str) -> list[tuple[str, str]] | None:
        """The (column, type) pairs ``create_interval_table`` just created ``table`` with, once (then forgotten)."""
        return self._created_layouts.pop(table, None)

    def create_table_with_rows(self, table: str, query_sql: str, partitioned_by: Sequence[str] = ()) -> int | None:
        """Create ``table`` holding the query's rows in one CTAS, the cheapest first write (what plain Spark would
        run). Returns the rows written, or None when another writer created the table first (then write with
        ``replace_full`` / ``overwrite_interval`` like into any existing table).

        Crash-safe: Spark registers a CTAS table only after its files are written, so the catalog never shows a
        partial table; a folder left by a crash is removed on the next attempt (``create_table_as``).
        """
        return self.create_table_from_select(table, f"SELECT * FROM ({query_sql}) AS source", partitioned_by)

    def create_table_from_select(
        self, table: str, select_sql: str, partitioned_by: Sequence[str] = (), checks: RowChecks | None = None
    ) -> int | None:
        """One CTAS; returns the rows written, or None when another writer created ``table`` first. ``checks``:
        conditions the write counts on its rows (``engine.counted_writes``)."""
        try:
            written = self.create_table_as(table, select_sql, partitioned_by, checks)
        except EngineError as error:
            if self._lost_creation_race(table, error):
                return None
            raise
        return written if written is not None else self.catalog.row_count(table)  # a fresh table's count reads footers

    def create_interval_table(
        self, table: str, query_sql: str, window: TimeWindow, *,
        columns: Sequence[tuple[str, str]] | None = None, empty_view: bool = False,
    ) -> bool:
        """Create the empty table of an INCREMENTAL_BY_TIME_RANGE model with the query's columns and types: a period
        table (``engine.period_tables``) when the window names a period and the time column is a date or a
        timestamp, else a table partitioned by the time column. True if this call created it, False if another
        writer did first.

        A plain CREATE TABLE: registering an empty table writes no file, so concurrent creators (runs over
        different ranges of a new model) only find the table there. A CTAS writes its files before it registers
        the table, so a racing loser could clear the winner's files or take them for a crash's leftovers
        (measured: 1 of 3 concurrent Dagster range runs failed that way): ``write_first_interval`` creates a
        period table with its rows only under the table's write lock.

        ``columns``: the query's (column, type) pairs if the caller analyzed it already. A period table's view is
        created by its first write (``empty_view``: now, with no rows, for a query that reads its own table).
        """
        layout = self._interval_columns(table, query_sql, window, columns)
        if _is_period_layout(layout, window):
            period_layout = PeriodLayout(tuple(layout), window.period)
            created = create_period_table(self, table, period_layout, empty_view=empty_view)
            self._layouts.remember(table, period_layout)  # only once the table is there: a failed create caches nothing
            return created
        columns = ", ".join(f"{quote_identifier(name)} {data_type}" for name, data_type in layout)
        statement = (
            f"CREATE TABLE {quote(table)} ({columns}) USING parquet PARTITIONED BY ({quote_identifier(window.column)})"
        )
        created = self.create_empty_table(table, statement)
        # The catalog lists partition columns last.
        self._created_layouts[table] = [c for c in layout if c[0] != window.column] + [
            c for c in layout if c[0] == window.column
        ]
        return created

    def create_empty_table(self, table: str, statement: str) -> bool:
        """Run ``statement``, a CREATE TABLE of ``table`` with no rows; False if another writer created it first.
        A folder left by a crash (no table owns it) is removed first."""
        try:
            self.catalog.execute(statement)
        except EngineError as error:
            if self._lost_creation_race(table, error):
                return False
            if error_class(error.__cause__) != "LOCATION_ALREADY_EXISTS":
                raise
            self._remove_stale_location(table, error.__cause__)
            self.catalog.execute(statement)
        return True

    def write_first_interval(
        self, table: str, query_sql: str, window: TimeWindow, *,
        columns: Sequence[tuple[str, str]] | None = None, checks: RowChecks | None = None,
    ) -> int | None:
        """Create the table of an INCREMENTAL_BY_TIME_RANGE model by writing the window's rows into it: a period
        table, in one CTAS, then its view. Returns the rows written; None when it did not (the layout is not a
        period table's, or the table is there already): ``create_interval_table`` and ``overwrite_interval``
        then. The caller holds the table's write lock (``create_interval_table`` says why).

        ``columns``: the query's (column, type) pairs as the caller's analysis saw them (over temp views of
        parents not written yet, too): they name the columns and type the time column; the table takes the
        types the query has when it runs."""
        layout = self._interval_columns(table, query_sql, window, columns)
        if not _is_period_layout(layout, window):
            return None
        period_layout = PeriodLayout(tuple(layout), window.period)
        written = create_period_table_with_rows(self, table, query_sql, window, period_layout, checks=checks)
        if written is not None:
            # Kept for the writes and audits that follow (no catalog round trip): the query's types over temp
            # views of new parents are the types it has over their tables, which hold those views' rows.
            self._layouts.remember(table, period_layout)
        return written

    def _interval_columns(
        self, table: str, query_sql: str, window: TimeWindow, columns: Sequence[tuple[str, str]] | None
    ) -> list[tuple[str, str]]:
        """The query's (column, type) pairs (analyzed, no Spark job, unless given), checked for the time column."""
        layout = list(columns) if columns is not None else self.catalog.query_schema(query_sql)
        if window.column not in {name for name, _ in layout}:
            raise EngineError(
                f"the query of {table} has no column {window.column}, its time column",
                snippet=", ".join(name for name, _ in layout),
                hint="select the time column, or name the right one in the model's kind",
            )
        return layout

    def _lost_creation_race(self, table: str, error: EngineError) -> bool:
        """Whether a CREATE TABLE failed because another writer created the table meanwhile: the table exists, or
        its folder does and the table is registered now (a registered table's folder is never a leftover)."""
        condition = error_class(error.__cause__)
        if condition in ("TABLE_OR_VIEW_ALREADY_EXISTS", "TABLE_ALREADY_EXISTS"):
            return True
        return condition == "LOCATION_ALREADY_EXISTS" and self.catalog.table_exists(table)

    def create_table_like_query(self, table: str, query_sql: str, partitioned_by: Sequence[str] = ()) -> None:
        """An empty parquet table with the query's columns and types (the query runs with no rows)."""
        self.create_table_as(table, f"SELECT * FROM ({query_sql}) AS source WHERE 1 = 0", partitioned_by)

    def create_table_as(
        self, table: str, select_sql: str, partitioned_by: Sequence[str], checks: RowChecks | None = None
    ) -> int | None:
        """The CTAS; returns the rows it wrote (None: the session did not say). A rival's table is an error here
        (the writers' staging tables have one writer at a time); ``create_table_from_select`` tells it apart."""
        try:
            return create_counting(self.spark, table, select_sql, partitioned_by, checks)
        except EngineError as error:
            if error_class(error.__cause__) != "LOCATION_ALREADY_EXISTS" or self.catalog.table_exists(table):
                raise  # a table registered meanwhile owns the folder: never remove it
            # A crash between writing a table's files and registering it leaves its folder behind.
            self._remove_stale_location(table, error.__cause__)
            return create_counting(self.spark, table, select_sql, partitioned_by, checks)

    def _remove_stale_location(self, table: str, cause: BaseException | None) -> None:
        location = _error_parameter(cause, "location")
        warehouse = _local_path(self.spark.conf.get("spark.sql.warehouse.dir") or "")
        folder = _local_path(location or "")
        if folder is None or warehouse is None or warehouse not in folder.parents or not folder.is_dir():
            raise EngineError(
                f"the folder of table {table} already exists and is not a stale folder inside this project's warehouse",
                snippet=str(location),
                hint="remove the folder by hand if it holds nothing you need",
            )
        shutil.rmtree(folder)


def _error_parameter(error: BaseException | None, name: str) -> str | None:
    getter = getattr(error, "getMessageParameters", None)
    try:
        parameters = getter() if getter else None
    except Exception:  # a wrapped error without parameters: nothing to read
        return None
    value = (parameters or {}).get(name)
    return value.strip("'`\"") if value else None  # Spark quotes parameter values for display


def _local_path(location: str) -> Path | None:
    """A local filesystem path for ``file:`` URIs and plain paths; None for remote storage (hdfs:, s3a:...)."""
    parsed = urlparse(location)
    if parsed.scheme not in ("", "file") or not parsed.path:
        return None
    return Path(parsed.path).resolve()


def _is_period_layout(layout: Sequence[tuple[str, str]], window: TimeWindow) -> bool:
    """Whether the model's table is a period table: the window names a period and the time column is a date or a
    timestamp (``engine.period_tables``)."""
    return window.period is not None and dict(layout)[window.column].lower() in PERIOD_TIME_TYPES
