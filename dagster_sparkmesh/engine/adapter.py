"""SparkEngine: the table writers the executor needs, on parquet tables in the Hive catalog; a facade composed of
its parts, not inheriting them: ``engine.catalog`` (``SparkCatalog``: statements, queries, catalog lookups and views),
``engine.creation`` (``TableCreation``: creating tables) and ``engine.layouts`` (``PeriodLayouts``: the one cache of
period layouts, filled and emptied by that object alone). Callers reach the parts' operations through them
(``engine.catalog.query_rows(...)``, ``engine.creation.create_interval_table(...)``); the engine's own vocabulary is
the writers, ``period_layout`` and ``drop_physical`` (which must forget the layout of the table it drops).

Writers select the table's columns by name, in the table's order (a partitioned parquet table keeps its partition
columns last, so ``SELECT *`` of the model's query would not line up). Each writer computes the model's rows
once into a persisted DataFrame (memory and disk): the row count, the partitions written and the INSERT all read
that one result, so a non-deterministic query cannot write one set of days and clear another. The exception is an
interval write into a table this step created: nothing there can be stale, so it writes straight from the query.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from pyspark.sql import DataFrame, SparkSession
from pyspark.storagelevel import StorageLevel

from dagster_sparkmesh.engine.catalog import SparkCatalog
from dagster_sparkmesh.engine.counted_writes import RowChecks, insert_counting
from dagster_sparkmesh.engine.failures import spark_errors
from dagster_sparkmesh.engine.merge_sql import key_match as merge_on
from dagster_sparkmesh.engine.merge_sql import merged_select
from dagster_sparkmesh.engine.partition_sql import (
    TimeWindow, column_list, drop_partition_statements, rebalance_hint,
)
from dagster_sparkmesh.engine.period_layouts import PeriodLayouts
from dagster_sparkmesh.engine.period_tables import PeriodLayout, overwrite_period_interval
from dagster_sparkmesh.engine.table_creation import TableCreation
from dagster_sparkmesh.engine.typed_rows import typed_frame
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.model.merge_clauses import MergeRules
from dagster_sparkmesh.snapshot.naming import period_data_table, quote, quote_identifier

UPSERT_STAGING_SUFFIX = "__sm_upsert"


class SparkEngine:
    """One Spark session's engine: its catalog, table creation and period layouts, and the writers over them."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.catalog = SparkCatalog(spark)
        self.layouts = PeriodLayouts(self.catalog)
        self.creation = TableCreation(self.catalog, self.layouts)

    def period_layout(self, table: str) -> PeriodLayout | None:
        """The layout of ``table`` if it is a period table (its data table is in the catalog), else None."""
        return self.layouts.layout_of(table)

    def drop_physical(self, qualified: str, *, is_view: bool) -> None:
        """A snapshot's physical table: a view (``is_view``: a VIEW kind's), a table, or a period table's view
        and then its data table (``engine.period_tables``), whichever the catalog holds; its layout is forgotten."""
        self.layouts.forget(qualified)
        if is_view:
            self.catalog.drop_view(qualified)
            return
        if self.catalog.object_type(qualified) == "VIEW":
            self.catalog.drop_view(qualified)
        else:
            self.catalog.drop_table(qualified, purge=True)  # a lakehouse table's files go with it
        self.catalog.drop_table(period_data_table(qualified))

    # -- writers ---------------------------------------------------------------------------------------------

    def replace_full(self, table: str, query_sql: str) -> int:
        """FULL kind: the table's whole content becomes the query's rows. Returns the rows written.

        The rows are computed (and persisted) before the INSERT OVERWRITE starts deleting old files, which keeps the
        window where a crash leaves the table short to the write itself; the interval stays unrecorded then.
        """
        columns = self._column_names(table)
        with self._staged(f"SELECT {column_list(columns)} FROM ({query_sql}) AS source") as (view, rows):
            self.catalog.execute(f"INSERT OVERWRITE TABLE {quote(table)} SELECT * FROM {quote_identifier(view)}")
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
        explicitly (architecture invariant 3). Running it twice gives the same table.

        ``fresh``: the caller created the table empty for this write, so no partition of the window can be stale;
        the search for stale partitions (a Spark job reading the window's files) is skipped. ``new``: moreover
        nobody wrote into it since (the caller created it holding the table's write lock): a period table's
        first write need not read its view. ``checks``: conditions a period table's write counts on the
        window's rows (``engine.counted_writes``).
        """
        period_layout = self.period_layout(table)
        if period_layout is not None:
            return overwrite_period_interval(self.creation, table, query_sql, window, period_layout, new=new, checks=checks)
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
            self.catalog.execute(f"INSERT OVERWRITE TABLE {quote(table)} SELECT * FROM {quote_identifier(view)}")
            self._drop_partitions_not_in(table, quote_identifier(view), where=partition_window, partitions=partitions)
        return rows

    def _overwrite_one_day(self, table: str, select_sql: str, window: TimeWindow, day: str) -> int:
        """The daily run's write: one day of a table partitioned by a DATE time column, straight from the query.

        Every row of a one-day window has that date, so the dynamic overwrite can replace no other partition, and
        the only stale partition there can be is the day itself when the query has no row for it: dropped then
        (it is empty now, architecture invariant 3). No staging and no search for stale days: three Spark jobs become
        one. Dynamic, not a static ``PARTITION (ds = ...)``: a static overwrite deletes the day's files before the
        query runs, so a crash meanwhile would leave an interval recorded by an earlier run without its rows; and a
        dynamic overwrite writes into a staging folder, so a query may read the table it replaces a day of.
        """
        written = self.insert_overwrite_counted(table, select_sql, window.predicate("date"))
        if written == 0:
            for drop in drop_partition_statements(table, [window.column], [[day]]):
                self.catalog.execute(drop)
        return written

    def _write_layout(self, table: str, window: TimeWindow, fresh: bool) -> tuple[dict[str, str], list[str]]:
        """Column → type in table order, and the partition columns: as created by this engine, else the catalog's."""
        created = self.creation.take_created_layout(table)
        if fresh and created is not None:
            return dict(created), [window.column]
        catalog = self.catalog.catalog_columns(table)  # one catalog round trip for the types and the partitions
        return {column.name: column.data_type for column in catalog}, [c.name for c in catalog if c.is_partition]

    def insert_overwrite_counted(self, table: str, select_sql: str, partition_window: str) -> int:
        """``INSERT OVERWRITE`` (dynamic: the partitions written) of ``select_sql``, whose columns are in table order.
        Returns the rows written, counted by the write itself (``engine.counted_writes``), else by a count of the
        window (a second job listing every partition written: 20-30 % of a 365-day write)."""
        written = insert_counting(self.spark, table, select_sql, overwrite=True)
        if written is not None:
            return written
        return int(self.catalog.query_rows(f"SELECT COUNT(*) FROM {quote(table)} WHERE {partition_window}")[0][0])

    def overwrite_partitions(self, table: str, query_sql: str, partitioned_by: Sequence[str]) -> int:
        """INCREMENTAL_BY_PARTITION (and unmanaged ``insert_overwrite``): the query's rows replace exactly the
        partitions they fall in (dynamic overwrite); partitions they have no row for keep theirs, as SQLMesh defines
        the kind. No ``partitioned_by``: the whole table is replaced. Returns the rows written."""
        if not partitioned_by:
            return self.replace_full(table, query_sql)
        catalog = self.catalog.catalog_columns(table)
        partitions = [column.name for column in catalog if column.is_partition]
        if partitions != list(partitioned_by):  # else the overwrite would replace other partitions, or all
            raise EngineError(
                f"{table} is partitioned by ({', '.join(partitions)}), "
                f"not by the model's partitioned_by ({', '.join(partitioned_by)})",
                hint="a forward-only model keeps its table: restore partitioned_by, or rename the model",
            )
        columns = [column.name for column in catalog]
        with self._staged(f"SELECT {column_list(columns)} FROM ({query_sql}) AS source") as (view, rows):
            self.catalog.execute(f"INSERT OVERWRITE TABLE {quote(table)} SELECT * FROM {quote_identifier(view)}")
        return rows

    def append_rows(self, table: str, query_sql: str) -> int:
        """INCREMENTAL_UNMANAGED: add the query's rows to the table. Returns the rows written."""
        columns = self._column_names(table)
        with self._staged(f"SELECT {column_list(columns)} FROM ({query_sql}) AS source") as (view, rows):
            self.catalog.execute(f"INSERT INTO TABLE {quote(table)} SELECT * FROM {quote_identifier(view)}")
        return rows

    def upsert_by_key(self, table: str, query_sql: str, unique_key: Sequence[str], merge: MergeRules = MergeRules()) -> int:
        """INCREMENTAL_BY_UNIQUE_KEY without MERGE: (old rows whose key is not new) UNION ALL (new rows).

        Crash-safe by staging: the merged content is first written completely into ``<table>__sm_upsert`` (Spark
        registers a CTAS table only after its files are written, so a staging table in the catalog is always
        complete), then copied over the target with INSERT OVERWRITE, then dropped. If the process dies while the
        target is overwritten, the staging table still holds every row, and the next upsert on this table first
        finishes that copy. The old rows are therefore always in the target or in the staging table. Cost: the
        table is written twice per run. Keys compare null-safe (``<=>``). The model's ``when_matched`` and
        ``merge_filter`` (``merge``) make it the query ``MERGE INTO`` would leave (``model.merge_clauses``).
        Returns the number of new rows.
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
            ) if merge.plain else merged_select(
                quote(table), quote_identifier(view), columns, merge_on(unique_key, merge.merge_filter), merge.when_matched
            )
            self.creation.create_table_as(staging, merged, self.catalog.partition_columns(table))
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
        self.creation.create_table_as(staging, select, self.catalog.partition_columns(table))
        rows = self.catalog.row_count(staging)
        self._copy_staging(staging, table)
        return rows

    def _finish_interrupted_upsert(self, table: str, staging: str) -> None:
        if self.catalog.table_exists(staging):
            self._copy_staging(staging, table)

    def _copy_staging(self, staging: str, table: str) -> None:
        columns = column_list(self._column_names(table))
        self.catalog.execute(f"INSERT OVERWRITE TABLE {quote(table)} SELECT {columns} FROM {quote(staging)}")
        self._drop_partitions_not_in(table, quote(staging), where="TRUE")
        self.catalog.drop_table(staging)

    def write_dataframe(self, table: str, frame: DataFrame, partitioned_by: Sequence[str] = ()) -> int:
        """Python models and seeds: the table's content becomes ``frame`` (the table is created if missing)."""
        view = _temp_name("frame")
        with spark_errors(f"temporary view {view}"):
            frame.createOrReplaceTempView(view)
        try:
            select = f"SELECT * FROM {quote_identifier(view)}"
            rows = None if self.catalog.table_exists(table) else self.creation.create_table_with_rows(table, select, partitioned_by)
            return self.replace_full(table, select) if rows is None else rows
        finally:
            _drop_temp_view(self.spark, view)

    def load_seed(self, table: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[object]]) -> int:
        """Write a seed's rows, cast to the declared (column, Spark type) pairs, as the table's whole content."""
        return self.write_dataframe(table, typed_frame(self.spark, columns, rows))

    # -- helpers -----------------------------------------------------------------------------------------------

    def _column_names(self, table: str) -> list[str]:
        return [name for name, _ in self.catalog.columns(table)]

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
            _drop_temp_view(self.spark, view)
            frame.unpersist()

    def _drop_partitions_not_in(
        self, table: str, source: str, *, where: str, partitions: Sequence[str] | None = None
    ) -> None:
        """Drop the table's partitions matching ``where`` that ``source`` (a quoted view or table) has no rows for."""
        partitions = self.catalog.partition_columns(table) if partitions is None else list(partitions)
        if not partitions:
            return
        as_text = ", ".join(f"CAST({quote_identifier(column)} AS STRING)" for column in partitions)
        stale = self.catalog.query_rows(
            f"SELECT DISTINCT {as_text} FROM {quote(table)} WHERE {where} "
            f"EXCEPT SELECT DISTINCT {as_text} FROM {source}"
        )
        for statement in drop_partition_statements(table, partitions, stale):
            self.catalog.execute(statement)


def _drop_temp_view(spark: SparkSession, view: str) -> None:
    with spark_errors(f"DROP VIEW {view}"):
        spark.catalog.dropTempView(view)


def _temp_name(purpose: str) -> str:
    return f"sparkmesh_{purpose}_{uuid.uuid4().hex[:12]}"
