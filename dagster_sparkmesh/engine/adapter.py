"""SparkEngine: the table writers the executor needs, on parquet tables in the Hive catalog, over ``SparkCatalog``
(statements, queries, catalog lookups and views).

Writers select the table's columns by name, in the table's order (a partitioned parquet table keeps its partition
columns last, so ``SELECT *`` of the model's query would not line up). Each writer computes the model's rows
once into a persisted DataFrame (memory and disk): the row count, the partitions written and the INSERT all read
that one result, so a non-deterministic query cannot write one set of days and clear another. The exception is an
interval write into a table this step created: nothing there can be stale, so it writes straight from the query.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

from pyspark.sql import DataFrame, SparkSession
from pyspark.storagelevel import StorageLevel

from dagster_sparkmesh.engine.catalog import SparkCatalog
from dagster_sparkmesh.engine.counted_writes import RowChecks, create_counting, insert_counting
from dagster_sparkmesh.engine.failures import error_class, spark_errors
from dagster_sparkmesh.engine.partition_sql import (
    TimeWindow, column_list, drop_partition_statements, rebalance_hint,
)
from dagster_sparkmesh.engine.period_tables import (
    PERIOD_TIME_TYPES, PeriodLayout, create_period_table, create_period_table_with_rows, layout_from_catalog,
    overwrite_period_interval,
)
from dagster_sparkmesh.engine.typed_rows import typed_frame
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.snapshot.naming import period_data_table, quote, quote_identifier

UPSERT_STAGING_SUFFIX = "__sm_upsert"


class SparkEngine(SparkCatalog):
    def __init__(self, spark: SparkSession) -> None:
        super().__init__(spark)
        # (column, type) in table order of the tables ``create_interval_table`` just created, for the fresh write
        # that follows: it need not ask the catalog for a layout this engine wrote itself a moment ago.
        self._created_layouts: dict[str, list[tuple[str, str]]] = {}

    # -- tables ----------------------------------------------------------------------------------------------

    def create_table_with_rows(self, table: str, query_sql: str, partitioned_by: Sequence[str] = ()) -> int | None:
        """Create ``table`` holding the query's rows in one CTAS, the cheapest first write (what plain Spark would
        run). Returns the rows written, or None when another writer created the table first (then write with
        ``replace_full`` / ``overwrite_interval`` like into any existing table).

        Crash-safe: Spark registers a CTAS table only after its files are written, so the catalog never shows a
        partial table; a folder left by a crash is removed on the next attempt (``_create_table_as``).
        """
        return self.create_table_from_select(table, f"SELECT * FROM ({query_sql}) AS source", partitioned_by)

    def create_table_from_select(
        self, table: str, select_sql: str, partitioned_by: Sequence[str] = (), checks: RowChecks | None = None
    ) -> int | None:
        """One CTAS; returns the rows written, or None when another writer created ``table`` first. ``checks``:
        conditions the write counts on its rows (``engine.counted_writes``)."""
        try:
            written = self._create_table_as(table, select_sql, partitioned_by, checks)
        except EngineError as error:
            if self._lost_creation_race(table, error):
                return None
            raise
        return written if written is not None else self.row_count(table)  # a fresh table's count reads footers

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
            self._period_layouts[table] = period_layout  # only once the table is there: a failed create caches nothing
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
            self.execute(statement)
        except EngineError as error:
            if self._lost_creation_race(table, error):
                return False
            if error_class(error.__cause__) != "LOCATION_ALREADY_EXISTS":
                raise
            self._remove_stale_location(table, error.__cause__)
            self.execute(statement)
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
            self._period_layouts[table] = period_layout
        return written

    def _interval_columns(
        self, table: str, query_sql: str, window: TimeWindow, columns: Sequence[tuple[str, str]] | None
    ) -> list[tuple[str, str]]:
        """The query's (column, type) pairs (analyzed, no Spark job, unless given), checked for the time column."""
        layout = list(columns) if columns is not None else self.query_schema(query_sql)
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
        return condition == "LOCATION_ALREADY_EXISTS" and self.table_exists(table)

    def create_table_like_query(self, table: str, query_sql: str, partitioned_by: Sequence[str] = ()) -> None:
        """An empty parquet table with the query's columns and types (the query runs with no rows)."""
        self._create_table_as(table, f"SELECT * FROM ({query_sql}) AS source WHERE 1 = 0", partitioned_by)

    def _create_table_as(
        self, table: str, select_sql: str, partitioned_by: Sequence[str], checks: RowChecks | None = None
    ) -> int | None:
        """The CTAS; returns the rows it wrote (None: the session did not say)."""
        try:
            return create_counting(self.spark, table, select_sql, partitioned_by, checks)
        except EngineError as error:
            if error_class(error.__cause__) != "LOCATION_ALREADY_EXISTS" or self.table_exists(table):
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

    # -- writers ---------------------------------------------------------------------------------------------

    def replace_full(self, table: str, query_sql: str) -> int:
        """FULL kind: the table's whole content becomes the query's rows. Returns the rows written.

        The rows are computed (and persisted) before the INSERT OVERWRITE starts deleting old files, which keeps the
        window where a crash leaves the table short to the write itself; the interval stays unrecorded then.
        """
        columns = self._column_names(table)
        with self._staged(f"SELECT {column_list(columns)} FROM ({query_sql}) AS source") as (view, rows):
            self.execute(f"INSERT OVERWRITE TABLE {quote(table)} SELECT * FROM {quote_identifier(view)}")
            self._drop_partitions_not_in(table, quote_identifier(view), where="TRUE")
        return rows

    def overwrite_interval(
        self,
        table: str,
        query_sql: str,
        window: TimeWindow,
        *,
        partition_column: str | None = None,
        fresh: bool = False,
        new: bool = False,
        checks: RowChecks | None = None,
    ) -> int:
        """INCREMENTAL_BY_TIME_RANGE: replace exactly the rows of ``[start, end)``. Returns the rows written.

        The table is partitioned by the time column itself (``partition_column`` defaults to it): a daily model
        has one partition per day, an hourly model one per hour, so the time column must hold the period (a
        date, an hour-truncated timestamp, or a string in ``time_format``), not a raw event time. Only query rows
        inside the window are written, so a query that returns other days cannot touch them. Dynamic partition
        overwrite replaces the partitions written; partitions inside the window that now get no rows are dropped
        explicitly (DESIGN invariant 3). Running it twice gives the same table.

        ``fresh``: the caller created the table empty for this write, so no partition of the window can be stale;
        the search for stale partitions (a Spark job reading the window's files) is skipped. ``new``: moreover
        nobody wrote into it since (the caller created it holding the table's write lock): a period table's
        first write need not read its view. ``checks``: conditions a period table's write counts on the
        window's rows (``engine.counted_writes``).
        """
        period_layout = self.period_layout(table)
        if period_layout is not None:
            return overwrite_period_interval(self, table, query_sql, window, period_layout, new=new, checks=checks)
        partition_column = partition_column or window.column
        types, partitions = self._write_layout(table, window, fresh)
        if partition_column not in partitions:
            raise EngineError(
                f"{table} is not partitioned by {partition_column}: "
                "an interval overwrite would replace the whole table",
                hint="create the table with PARTITIONED BY the time column",
            )
        partition_window = window.predicate(types[partition_column], column=partition_column)
        hint = rebalance_hint(partition_column) if window.spans_several_days else ""
        select = (
            f"SELECT {hint}{column_list(types)} FROM ({query_sql}) AS source "
            f"WHERE {window.predicate(types[window.column])}"
        )
        if fresh:  # nothing stale to find: write straight from the query, one job
            return self.insert_overwrite_counted(table, select, partition_window)
        day = window.single_day if partition_column == window.column else None
        if day is not None and types[partition_column].lower() == "date":
            return self._overwrite_one_day(table, select, window, day)
        with self._staged(select) as (view, rows):
            self.execute(f"INSERT OVERWRITE TABLE {quote(table)} SELECT * FROM {quote_identifier(view)}")
            self._drop_partitions_not_in(table, quote_identifier(view), where=partition_window, partitions=partitions)
        return rows

    def _overwrite_one_day(self, table: str, select_sql: str, window: TimeWindow, day: str) -> int:
        """The daily run's write: one day of a table partitioned by a DATE time column, straight from the query.

        Every row of a one-day window has that date, so the dynamic overwrite can replace no other partition, and
        the only stale partition there can be is the day itself when the query has no row for it: dropped then
        (it is empty now, DESIGN invariant 3). No staging and no search for stale days: three Spark jobs become
        one. Dynamic, not a static ``PARTITION (ds = ...)``: a static overwrite deletes the day's files before the
        query runs, so a crash meanwhile would leave an interval recorded by an earlier run without its rows; and a
        dynamic overwrite writes into a staging folder, so a query may read the table it replaces a day of.
        """
        written = self.insert_overwrite_counted(table, select_sql, window.predicate("date"))
        if written == 0:
            for drop in drop_partition_statements(table, [window.column], [[day]]):
                self.execute(drop)
        return written

    def period_layout(self, table: str) -> PeriodLayout | None:
        """The layout of ``table`` if it is a period table (its data table is in the catalog), else None."""
        if table not in self._period_layouts:
            try:
                listed = self._catalog_columns(period_data_table(table))
            except EngineError as error:
                if error_class(error.__cause__) not in ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND"):
                    raise
                return None
            layout = layout_from_catalog([(c.name, c.dataType, c.isPartition) for c in listed])
            if layout is None:
                return None
            self._period_layouts[table] = layout  # a version's table never changes its layout
        return self._period_layouts[table]

    def _write_layout(self, table: str, window: TimeWindow, fresh: bool) -> tuple[dict[str, str], list[str]]:
        """Column → type in table order, and the partition columns: as created by this engine, else the catalog's."""
        created = self._created_layouts.pop(table, None)
        if fresh and created is not None:
            return dict(created), [window.column]
        catalog = self._catalog_columns(table)  # one catalog round trip for the types and the partitions
        return {column.name: column.dataType for column in catalog}, [c.name for c in catalog if c.isPartition]

    def insert_overwrite_counted(self, table: str, select_sql: str, partition_window: str) -> int:
        """``INSERT OVERWRITE`` (dynamic: the partitions written) of ``select_sql``, whose columns are in table order.
        Returns the rows written, counted by the write itself (``engine.counted_writes``), else by a count of the
        window (a second job listing every partition written: 20-30 % of a 365-day write)."""
        written = insert_counting(self.spark, table, select_sql, overwrite=True)
        if written is not None:
            return written
        return int(self.query_rows(f"SELECT COUNT(*) FROM {quote(table)} WHERE {partition_window}")[0][0])

    def overwrite_partitions(self, table: str, query_sql: str, partitioned_by: Sequence[str]) -> int:
        """INCREMENTAL_BY_PARTITION (and unmanaged ``insert_overwrite``): the query's rows replace exactly the
        partitions they fall in (dynamic overwrite); partitions they have no row for keep theirs, as SQLMesh defines
        the kind. No ``partitioned_by``: the whole table is replaced. Returns the rows written."""
        if not partitioned_by:
            return self.replace_full(table, query_sql)
        catalog = self._catalog_columns(table)
        partitions = [column.name for column in catalog if column.isPartition]
        if partitions != list(partitioned_by):  # else the overwrite would replace other partitions, or all
            raise EngineError(
                f"{table} is partitioned by ({', '.join(partitions)}), "
                f"not by the model's partitioned_by ({', '.join(partitioned_by)})",
                hint="a forward-only model keeps its table: restore partitioned_by, or rename the model",
            )
        columns = [column.name for column in catalog]
        with self._staged(f"SELECT {column_list(columns)} FROM ({query_sql}) AS source") as (view, rows):
            self.execute(f"INSERT OVERWRITE TABLE {quote(table)} SELECT * FROM {quote_identifier(view)}")
        return rows

    def append_rows(self, table: str, query_sql: str) -> int:
        """INCREMENTAL_UNMANAGED: add the query's rows to the table. Returns the rows written."""
        columns = self._column_names(table)
        with self._staged(f"SELECT {column_list(columns)} FROM ({query_sql}) AS source") as (view, rows):
            self.execute(f"INSERT INTO TABLE {quote(table)} SELECT * FROM {quote_identifier(view)}")
        return rows

    def upsert_by_key(self, table: str, query_sql: str, unique_key: Sequence[str]) -> int:
        """INCREMENTAL_BY_UNIQUE_KEY without MERGE: (old rows whose key is not new) UNION ALL (new rows).

        Crash-safe by staging: the merged content is first written completely into ``<table>__sm_upsert`` (Spark
        registers a CTAS table only after its files are written, so a staging table in the catalog is always
        complete), then copied over the target with INSERT OVERWRITE, then dropped. If the process dies while the
        target is overwritten, the staging table still holds every row, and the next upsert on this table first
        finishes that copy. The old rows are therefore always in the target or in the staging table. Cost: the
        table is written twice per run. Keys compare null-safe (``<=>``). Returns the number of new rows.
        """
        staging = table + UPSERT_STAGING_SUFFIX
        self._finish_interrupted_upsert(table, staging)
        columns = self._column_names(table)
        key_match = " AND ".join(f"old.{quote_identifier(k)} <=> new.{quote_identifier(k)}" for k in unique_key)
        with self._staged(f"SELECT {column_list(columns)} FROM ({query_sql}) AS source") as (view, rows):
            merged = (
                f"SELECT {column_list(columns, 'old.')} FROM {quote(table)} AS old "
                f"LEFT ANTI JOIN {quote_identifier(view)} AS new ON {key_match} "
                f"UNION ALL SELECT * FROM {quote_identifier(view)}"
            )
            self._create_table_as(staging, merged, self.partition_columns(table))
        self._copy_staging(staging, table)
        return rows

    def replace_with_query(self, table: str, query_sql: str) -> int:
        """The table's whole content becomes ``query_sql``, which may read the table itself (SCD type 2 history).

        Staged like ``upsert_by_key`` (same staging table, so an interrupted copy of either is finished by the
        next write of either): the new content is written completely before the target is overwritten.
        Returns the number of rows the table now holds.
        """
        staging = table + UPSERT_STAGING_SUFFIX
        self._finish_interrupted_upsert(table, staging)
        columns = self._column_names(table)
        select = f"SELECT {column_list(columns)} FROM ({query_sql}) AS source"
        self._create_table_as(staging, select, self.partition_columns(table))
        rows = self.row_count(staging)
        self._copy_staging(staging, table)
        return rows

    def _finish_interrupted_upsert(self, table: str, staging: str) -> None:
        if self.table_exists(staging):
            self._copy_staging(staging, table)

    def _copy_staging(self, staging: str, table: str) -> None:
        columns = column_list(self._column_names(table))
        self.execute(f"INSERT OVERWRITE TABLE {quote(table)} SELECT {columns} FROM {quote(staging)}")
        self._drop_partitions_not_in(table, quote(staging), where="TRUE")
        self.drop_table(staging)

    def write_dataframe(self, table: str, frame: DataFrame, partitioned_by: Sequence[str] = ()) -> int:
        """Python models and seeds: the table's content becomes ``frame`` (the table is created if missing)."""
        view = _temp_name("frame")
        with spark_errors(f"temporary view {view}"):
            frame.createOrReplaceTempView(view)
        try:
            select = f"SELECT * FROM {quote_identifier(view)}"
            rows = None if self.table_exists(table) else self.create_table_with_rows(table, select, partitioned_by)
            return self.replace_full(table, select) if rows is None else rows
        finally:
            self._drop_temp_view(view)

    def load_seed(self, table: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[object]]) -> int:
        """Write a seed's rows, cast to the declared (column, Spark type) pairs, as the table's whole content."""
        return self.write_dataframe(table, typed_frame(self.spark, columns, rows))

    # -- helpers -----------------------------------------------------------------------------------------------

    def _column_names(self, table: str) -> list[str]:
        return [name for name, _ in self.columns(table)]

    @contextmanager
    def _staged(self, select_sql: str) -> Iterator[tuple[str, int]]:
        """Compute ``select_sql`` once, persisted, as a temp view; yields (view, row count)."""
        view = _temp_name("rows")
        with spark_errors(select_sql):
            frame = self.spark.sql(select_sql).persist(StorageLevel.MEMORY_AND_DISK)
            try:
                rows = frame.count()
                frame.createOrReplaceTempView(view)
            except BaseException:
                frame.unpersist()
                raise
        try:
            yield view, rows
        finally:
            self._drop_temp_view(view)
            frame.unpersist()

    def _drop_partitions_not_in(
        self, table: str, source: str, *, where: str, partitions: Sequence[str] | None = None
    ) -> None:
        """Drop the table's partitions matching ``where`` that ``source`` (a quoted view or table) has no rows for."""
        partitions = self.partition_columns(table) if partitions is None else list(partitions)
        if not partitions:
            return
        as_text = ", ".join(f"CAST({quote_identifier(column)} AS STRING)" for column in partitions)
        stale = self.query_rows(
            f"SELECT DISTINCT {as_text} FROM {quote(table)} WHERE {where} "
            f"EXCEPT SELECT DISTINCT {as_text} FROM {source}"
        )
        for statement in drop_partition_statements(table, partitions, stale):
            self.execute(statement)

def _temp_name(purpose: str) -> str:
    return f"sparkmesh_{purpose}_{uuid.uuid4().hex[:12]}"


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
