"""SparkCatalog: statements, queries, catalog lookups and views of one Spark session (no table writes).

A class with no base, and one part of ``SparkEngine`` (``engine.adapter``), which holds it as ``engine.catalog``
next to the table creation and the writers: callers reach these operations as ``engine.catalog.query_rows(...)``.
It keeps no knowledge of table layouts (``engine.period_layouts`` does), only the schemas it created or found.

Identifiers arrive validated by ``snapshot.naming`` and are always backtick-quoted here. Every Spark failure
becomes an EngineError quoting the statement. Existence checks ask the catalog each time (architecture invariant 2).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from dagster_sparkmesh.engine.described_columns import CatalogColumn, columns_from_describe
from dagster_sparkmesh.engine.direct_catalog import CatalogEntry, DirectCatalog
from dagster_sparkmesh.engine.failure_kinds import is_transient
from dagster_sparkmesh.engine.failures import error_class, spark_errors
from dagster_sparkmesh.engine.lakehouse import SESSION_CATALOGS
from dagster_sparkmesh.engine.session import query_frame
from dagster_sparkmesh.engine.settings_turns import turns_of
from dagster_sparkmesh.engine.typed_rows import typed_frame
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.model.table_formats import ICEBERG
from dagster_sparkmesh.snapshot.naming import quote


class SparkCatalog:
    """Statements, queries, the catalog and views of one Spark session; ``SparkEngine`` holds it next to the table
    creation and the writers."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        # Schemas this engine created or found: a run asks once per schema, not once per model (a catalog round
        # trip each, ~0.1-0.4 s over Spark Connect). Only empty schemas are ever dropped (janitor, destroy), so one
        # holding the table being written cannot vanish meanwhile.
        self._schemas: set[str] = set()
        self._schema_creation = threading.Lock()
        self._system_functions: frozenset[str] | None = None
        self._system_functions_listing = threading.Lock()  # two models' threads ask at once: list once
        self._views_replaced: bool | None = None
        self._direct_catalog: DirectCatalog | None | bool = False  # (False: not asked yet)

    @property
    def _direct(self) -> DirectCatalog | None:
        """Look-ups without a statement where the session allows them (``engine.direct_catalog``)."""
        if self._direct_catalog is False:
            self._direct_catalog = DirectCatalog.of(self.spark)
        return self._direct_catalog

    def _direct_entry(self, qualified: str) -> tuple[bool, CatalogEntry | None]:
        """(whether the session catalog answers for ``qualified`` without a statement, its entry if it exists)."""
        direct = self._direct
        if direct is None or not direct.serves(qualified):
            return False, None
        return True, direct.entry(qualified)

    # -- statements and queries -------------------------------------------------------------------------------

    def execute(self, sql: str) -> None:
        with spark_errors(sql):
            self.spark.sql(sql)

    def query_df(self, sql: str) -> DataFrame:
        with spark_errors(sql):
            return self.spark.sql(sql)

    def query_rows(self, sql: str) -> list[tuple]:
        with spark_errors(sql):
            return [tuple(row) for row in self.spark.sql(sql).collect()]

    def query_schema(self, sql: str) -> list[tuple[str, str]]:
        """(column, Spark simple type) of a query's output: Spark analyzes it and runs no job (over Spark Connect,
        one analysis round trip)."""
        with spark_errors(sql):
            return [(field.name, field.dataType.simpleString()) for field in self.spark.sql(sql).schema.fields]

    def system_functions(self) -> frozenset[str]:
        """The names (lower case) of the functions Spark ships, asked once per engine."""
        with self._system_functions_listing:
            if self._system_functions is None and self._direct is not None:
                self._system_functions = self._direct.system_functions()
            if self._system_functions is None:
                rows = self.query_rows("SHOW SYSTEM FUNCTIONS")
                self._system_functions = frozenset(str(row[0]).lower() for row in rows)
        return self._system_functions

    @contextmanager
    def session_settings(self, settings: Sequence[tuple[str, str]], *, alone: bool = False) -> Iterator[None]:
        """Spark session settings for the work inside (a model's ``session_properties``), then the session as it
        was: every setting and the current catalog and database. Work with settings, or that may change the session
        itself (``alone``: its statements ``SET``, ``USE``...), runs alone on it, other work beside each other
        (``engine.settings_turns``): the settings are the whole session's."""
        turns = turns_of(self.spark)
        if not (settings or alone):
            with turns.shared():
                yield
            return
        with turns.alone():
            before = _SessionState.of(self.spark)
            try:
                with spark_errors(", ".join(f"SET {key} = {value}" for key, value in settings)):
                    for key, value in settings:
                        self.spark.conf.set(key, value)
                yield
            except BaseException as error:
                for failure in before.put_back(self.spark):
                    error.add_note(f"sparkmesh: could not put back the session's setting: {failure}")
                raise
            failures = before.put_back(self.spark)
            if failures:
                raise EngineError(
                    "could not put back the Spark session's settings after a model changed them: " + "; ".join(failures),
                    hint="a model's session_properties or SET statements may only name settings Spark lets a session change",
                )

    def create_query_view(self, view: str, sql: str) -> None:
        """A session temp view of a query (analyzed, not run): what a preflight reads in place of a new table."""
        with spark_errors(sql):
            query_frame(self.spark, sql).createOrReplaceTempView(view)  # one round trip over Spark Connect

    def row_count(self, table: str) -> int:
        return int(self.query_rows(f"SELECT COUNT(*) FROM {quote(table)}")[0][0])

    # -- catalog ---------------------------------------------------------------------------------------------

    def create_schema(self, name: str) -> None:
        if name in self._schemas:
            return
        with self._schema_creation:  # workers needing the same new schema wait for one creation, not ask again
            if name not in self._schemas:
                self.execute(f"CREATE SCHEMA IF NOT EXISTS {quote(name)}")
                self._schemas.add(name)

    def drop_schema(self, name: str, cascade: bool = False) -> None:
        self._schemas.discard(name)
        self.execute(f"DROP SCHEMA IF EXISTS {quote(name)} {'CASCADE' if cascade else 'RESTRICT'}")

    def table_exists(self, qualified: str) -> bool:
        """A table (not a view) of that name is in the catalog now."""
        kind = self.object_type(qualified)
        return kind is not None and kind != "VIEW"

    def physical_exists(self, qualified: str) -> bool:
        """A table or a view of that name is in the catalog now (a period table's physical table is a view)."""
        return self.object_type(qualified) is not None

    def view_exists(self, qualified: str) -> bool:
        return self.object_type(qualified) == "VIEW"

    def view_text(self, qualified: str) -> str | None:
        """The SQL a view was created or last altered with, as the catalog keeps it (trailing comments trimmed);
        None for a table or nothing. One metastore look-up, no Spark job."""
        served, entry = self._direct_entry(qualified)
        if served:
            return entry.view_text if entry is not None else None
        statement = f"DESCRIBE TABLE EXTENDED {quote(qualified)}"
        try:
            rows = self.query_rows(statement)
        except EngineError as error:
            if error_class(error.__cause__) in ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND"):
                return None
            raise
        return next((row[1] for row in rows if row[0] == "View Text"), None)

    def drop_table(self, qualified: str, *, purge: bool = False) -> None:
        """``purge``: the files go too, also those of an Iceberg table, whose catalog otherwise keeps them."""
        self.execute(f"DROP TABLE IF EXISTS {quote(qualified)}{' PURGE' if purge else ''}")

    def drop_view(self, qualified: str) -> None:
        self.execute(f"DROP VIEW IF EXISTS {quote(qualified)}")

    def list_tables(self, schema: str) -> list[str]:
        """Names (unqualified) of the tables and views in ``schema``; empty when the schema does not exist."""
        listing = self.list_schema(schema)
        return sorted(listing) if listing is not None else []

    def list_schema(self, schema: str) -> set[str] | None:
        """The tables and views in ``schema`` now, or None when the schema does not exist: one catalog round trip
        (asking whether the schema exists first would be a second one, and could be stale by the listing)."""
        direct = self._direct
        if direct is not None and direct.serves_schema(schema):
            listing = direct.table_names(schema)
            if listing is not None:
                self._schemas.add(schema)
            return listing
        statement = f"SHOW TABLES IN {quote(schema)}"
        with spark_errors(statement):
            try:
                rows = self.spark.sql(statement).collect()
                if "." in schema:  # a schema of another catalog, whose tables may leave out its views (Iceberg's)
                    rows += self.spark.sql(f"SHOW VIEWS IN {quote(schema)}").collect()
            except (PySparkException, Py4JError) as error:
                # (Iceberg's catalogs say so with their own exception, which Spark passes on without a class.)
                if error_class(error) == "SCHEMA_NOT_FOUND" or "NoSuchNamespaceException" in str(error):
                    return None
                raise
        self._schemas.add(schema)  # it exists: a write into it need not create it
        return {row[1] for row in rows if not row["isTemporary"]}  # (the table's or the view's name)

    def columns(self, qualified: str) -> list[tuple[str, str]]:
        """(name, Spark type) in table order (partition columns last)."""
        return [(column.name, column.data_type) for column in self.catalog_columns(qualified)]

    def partition_columns(self, qualified: str) -> list[str]:
        return [column.name for column in self.catalog_columns(qualified) if column.is_partition]

    def catalog_columns(self, qualified: str) -> list[CatalogColumn]:
        """Every column as DESCRIBE lists it (type, partition or not, comment): one catalog round trip."""
        _, entry = self._direct_entry(qualified)
        if entry is not None and entry.table_type != "VIEW" and entry.columns:
            return list(entry.columns)
        return self._described_columns(qualified)  # (also what raises when the table is not there)

    def catalog_columns_if_exists(self, qualified: str) -> list[CatalogColumn] | None:
        """``catalog_columns``, or None when neither the table nor its schema exists."""
        served, entry = self._direct_entry(qualified)
        if served and entry is None:
            return None
        if entry is not None and entry.table_type != "VIEW" and entry.columns:  # (else as DESCRIBE resolves them)
            return list(entry.columns)
        try:
            return self._described_columns(qualified)
        except EngineError as error:
            if error_class(error.__cause__) in ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND"):
                return None
            raise

    def _described_columns(self, qualified: str) -> list[CatalogColumn]:
        statement = f"DESCRIBE TABLE {quote(qualified)}"
        with spark_errors(statement):
            return columns_from_describe(tuple(row) for row in self.spark.sql(statement).collect())

    def object_type(self, qualified: str) -> str | None:
        """The catalog's type of a table or view now (``VIEW``, ``MANAGED``, ``EXTERNAL``), None when it does not exist."""
        served, entry = self._direct_entry(qualified)
        if served:
            return entry.table_type if entry is not None else None
        try:
            return self.spark.catalog.getTable(quote(qualified)).tableType
        except PySparkException as error:
            if error_class(error) in ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND") or "not found" in str(error):
                return self._view_of_another_catalog(qualified)
            message = f"cannot look up {qualified} in the catalog: {error}"
            raise EngineError(message, transient=is_transient(error)) from error

    def _view_of_another_catalog(self, qualified: str) -> str | None:
        """``VIEW`` for a view of a catalog other than the session's, which Spark's look-up does not find
        (Iceberg's views): the schema's listing has it. None for anything else not found."""
        if qualified.count(".") != 2:
            return None
        schema, name = qualified.rsplit(".", 1)
        return "VIEW" if name in (self.list_schema(schema) or ()) else None

    def create_temp_view(self, view: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[object]]) -> None:
        """A session temp view of typed rows (unit-test inputs)."""
        with spark_errors(f"temporary view {view}"):
            typed_frame(self.spark, columns, rows).createOrReplaceTempView(view)

    def drop_temp_view(self, view: str) -> None:
        with spark_errors(f"drop temporary view {view}"):
            self.spark.catalog.dropTempView(view)

    # -- views -----------------------------------------------------------------------------------------------

    def ensure_view(self, view: str, select_sql: str) -> None:
        """``create_or_alter_view`` unless the view already says exactly ``select_sql``: a re-run of a view whose
        query renders the same costs a look-up instead of a metastore update."""
        # Asked first: describing a view that does not exist makes Spark Connect's client log the error.
        kind = self.object_type(view)
        text = self.view_text(view) if kind == "VIEW" else None
        if text is None or text.strip() != select_sql.strip():
            self.create_or_alter_view(view, select_sql, known_missing=kind is None)

    def create_or_alter_view(self, view: str, select_sql: str, known_missing: bool = False) -> None:
        """Create the view if missing, else ALTER VIEW: readers never see it missing (never CREATE OR REPLACE).

        ``known_missing``: the caller has just listed the schema, so the existence check's round trip is skipped;
        a view created meanwhile is still altered below."""
        if not known_missing and self.view_exists(view):
            self.alter_view(view, select_sql)
            return
        try:
            # Schema evolution: a view over a table that gains columns (a forward-only change's, see
            # ``engine.column_additions``) shows them, as a fresh build of it would; ALTER VIEW keeps the mode.
            self.execute(f"CREATE VIEW {quote(view)} WITH SCHEMA EVOLUTION AS {select_sql}")
        except EngineError as error:
            # Another process created it between our check and our CREATE: alter it like any existing view.
            if error_class(error.__cause__) not in ("TABLE_OR_VIEW_ALREADY_EXISTS", "VIEW_ALREADY_EXISTS"):
                raise
            self.alter_view(view, select_sql)

    def alter_view(self, view: str, select_sql: str) -> None:
        """Point an existing view at ``select_sql`` in one catalog update, so readers see it before or after.

        Spark's own catalog does it with ``ALTER VIEW``. Iceberg's session catalog (``engine.lakehouse``) keeps
        views as its own, which refuse ``ALTER VIEW ... AS``: there a view is replaced in one commit of its
        metadata, with the schema mode the view was created with; so are the views of the catalogs a project
        declares for its models (``project.catalogs``), which are Iceberg's or others Spark knows less of."""
        if self._views_replaced is None:
            served = self.spark.conf.get("spark.sql.catalog.spark_catalog", None)
            self._views_replaced = served == SESSION_CATALOGS[ICEBERG]
        if self._views_replaced or view.count(".") == 2:  # (a view of a model's own catalog: see above)
            self.execute(f"CREATE OR REPLACE VIEW {quote(view)} WITH SCHEMA EVOLUTION AS {select_sql}")
        else:
            self.execute(f"ALTER VIEW {quote(view)} AS {select_sql}")


class _SessionState:
    """A session's settings and current namespace, to put back after a model that changed them."""

    def __init__(self, settings: dict[str, str], namespace: tuple[str, str]) -> None:
        self.settings = settings
        self.namespace = namespace

    @classmethod
    def of(cls, spark: SparkSession) -> _SessionState:
        return cls(dict(spark.conf.getAll), (spark.catalog.currentCatalog(), spark.catalog.currentDatabase()))

    def put_back(self, spark: SparkSession) -> list[str]:
        """Each setting that differs now set back (or unset), then the namespace; what could not be, as text."""
        now = dict(spark.conf.getAll)
        failures = []
        for key in sorted(set(now) | set(self.settings)):
            if now.get(key) == self.settings.get(key):
                continue
            try:
                if key in self.settings:
                    spark.conf.set(key, self.settings[key])
                else:
                    spark.conf.unset(key)
            except (PySparkException, Py4JError) as error:
                failures.append(f"{key}: {error_class(error) or error}")
        if (spark.catalog.currentCatalog(), spark.catalog.currentDatabase()) != self.namespace:
            spark.catalog.setCurrentCatalog(self.namespace[0])
            spark.catalog.setCurrentDatabase(self.namespace[1])
        return failures
