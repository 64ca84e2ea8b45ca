"""The Model record and the records it refers to (audits, external models, unit tests).

A Model is parsed from its file once, at load time, and never mutated. The query is kept as canonical Spark SQL
text (sqlglot-normalized, comments dropped, macro variables such as ``@start_ds`` kept as placeholders);
rendering for an interval happens later, in ``project.rendering``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import model_validator

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.kinds import ModelKind
from dagster_sparkmesh.records import Record

ModelSource = Literal["sql", "python", "seed"]


class AuditCall(Record):
    """An audit attached to a model: ``not_null(columns := (id, ds))`` → name + rendered SQL arguments."""

    name: str
    args: tuple[tuple[str, str], ...] = ()
    """(argument name, argument as Spark SQL text) pairs, in the order written."""

    @property
    def blocking(self) -> bool:
        return not self.name.endswith("_non_blocking")

    @property
    def base_name(self) -> str:
        return self.name.removesuffix("_non_blocking")


class PartitionExpression(Record):
    """An expression of ``partitioned_by`` over one column (BigQuery's ``DATE(ts)``, Iceberg's ``bucket(4, id)``),
    which SQLMesh accepts. A Spark table partitions by columns: the table is not partitioned by it, except that an
    Iceberg table partitions by the transform it means, when it means one (``iceberg``)."""

    written: str
    """As written in the header, for messages."""
    column: str
    """The one column it reads (lower case), as SQLMesh requires."""
    line: int
    iceberg: tuple[str, str, int | None] | None = None
    """(transform, column, width): ``("days", "ts", None)``, ``("bucket", "id", 4)``; None: it means none."""


class SignalCall(Record):
    """A signal gating a model's intervals: ``one_week_ago()`` or ``random_signal(threshold := 0.5)``."""

    name: str
    args: tuple[tuple[str, str], ...] = ()
    """(argument name, value as JSON text) pairs, in the order written."""


class AuditDefinition(Record):
    """A custom audit from ``audits/*.sql``: a query returning the offending rows."""

    name: str
    query: str
    """Spark SQL with ``@this_model`` and ``@<param>`` placeholders."""
    defaults: tuple[tuple[str, str], ...] = ()
    blocking: bool = True
    path: Path


class Model(Record):
    name: str
    """``schema.name``, lower case."""
    kind: ModelKind
    source: ModelSource
    path: Path
    """The file that defines the model (the .sql, .py or .csv file)."""
    root: Path | None = None
    """The project folder the file was loaded from: a relative file read (``parquet.`data/t.parquet```) is
    anchored there when the query is rendered, where SQLMesh users run ``sqlmesh`` (not the Spark server's folder).
    Not hashed: two checkouts of one project get the same versions."""
    line: int = 1
    dialect: str = "spark"
    """The dialect the model was written in; ``query`` is already transpiled to Spark SQL."""

    query: str | None = None
    """Canonical Spark SQL of the single query (None for Python, seed and external models)."""
    pre_statements: tuple[str, ...] = ()
    post_statements: tuple[str, ...] = ()

    python_source: str | None = None
    """Python models: the decorated function's module source, normalized through the AST (what is hashed)."""
    python_code: str | None = None
    """Python models: the file as the user wrote it, for display (not hashed: comments don't re-version)."""
    sql_code: str | None = None
    """SQL models: the statements after the MODEL header as the user wrote them, for plan diffs (not hashed)."""
    python_entrypoint: str | None = None
    """Python models: ``path/to/file.py:function_name``."""
    blueprint_variables: tuple[tuple[str, str], ...] = ()
    """Python models made from a blueprint: (variable, value as JSON text), for ``context.blueprint_var``."""
    seed_content_hash: str | None = None
    """Seeds: sha256 of the CSV bytes."""
    stamp: str | None = None
    """SQLMesh's ``stamp``: any text, part of the model's data, so that changing it makes a new version (a rebuild
    asked for without another change)."""
    macro_code: str | None = None
    """Digest of the code of the project's Python macros the model's file calls (``macros.code_digest``)."""

    cron: str = "@daily"
    cron_tz: str | None = None
    """SQLMesh's ``cron_tz``: the IANA zone the cron ticks in; None: UTC. The intervals stay in UTC
    (``model.cron_zones``)."""
    interval_unit: str | None = None
    """SQLMesh's ``interval_unit`` as written (``year`` ... ``five_minute``); None: inferred from the cron
    (``plan.intervals.interval_cron``)."""
    allow_partials: bool = False
    """SQLMesh's ``allow_partials``: a plan may compute the last interval before it is complete (up to the cron's
    last tick, or the plan's end), and computes it again whole once it is (``plan.intervals``)."""
    start: str | None = None
    """ISO date or timestamp; None means the project default."""
    end: str | None = None
    owner: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    grains: tuple[str, ...] = ()
    partitioned_by: tuple[str, ...] = ()
    """Partition columns; ``partition_expressions`` holds the entries that are expressions (kept apart, so that
    every user of this field keeps reading column names)."""
    partition_expressions: tuple[PartitionExpression, ...] = ()
    catalog: str | None = None
    """The Spark catalog the model's table and views live in, when its name's catalog is one the project's
    connection declares (``snapshot.naming``); None: the session's catalog."""
    table_format: str | None = None
    """SQLMesh's ``table_format`` (lower case): ``iceberg`` or ``delta`` make the physical table a lakehouse table
    (``model.table_formats``); other values, like Hive's, leave the default layouts."""
    storage_format: str | None = None
    """SQLMesh's ``storage_format`` (lower case): on Spark the table's ``USING`` when no table format is set."""
    physical_properties: tuple[tuple[str, str], ...] = ()
    """SQLMesh's ``physical_properties``: (key, value) table properties of a lakehouse table (``TBLPROPERTIES``:
    ``write.format.default``, ``delta.columnMapping.mode`` ...), the project's defaults merged under the model's."""
    columns: tuple[tuple[str, str], ...] = ()
    """Declared (column, Spark type) pairs, in order."""
    column_descriptions: tuple[tuple[str, str], ...] = ()
    audits: tuple[AuditCall, ...] = ()
    signals: tuple[SignalCall, ...] = ()
    """Signals that say which intervals are ready to compute (``signals/``); metadata, not data."""
    session_properties: tuple[tuple[str, str], ...] = ()
    """Spark session settings (key, value) for this model's job, set around it; metadata."""
    on_virtual_update: tuple[str, ...] = ()
    """Statements run after a promotion points this model's view at a new table (``@this_model`` = the view)."""
    enabled: bool = True

    depends_on: frozenset[str] = frozenset()
    """Names of the models and external models this one reads (from the query, plus ``depends_on``)."""
    depends_on_self: bool = False
    """The query reads the model's own table (its earlier intervals): computed interval by interval, in order."""

    data_hash: str = ""
    """sha256 of the data-affecting definition alone (see ``snapshot.fingerprint``)."""
    metadata_hash: str = ""
    fingerprint: str = ""
    """sha256 over ``data_hash`` and the parents' fingerprints (Merkle); the Dagster code version."""

    @model_validator(mode="after")
    def _partitioned_kind_has_partitions(self) -> Model:
        """SQLMesh's rule, checked here so SQL and Python models both meet it. A ProjectError, not a ValueError:
        pydantic passes it through unchanged, with the file and line."""
        replaces_partitions = self.kind.needs_partitioned_by or getattr(self.kind, "insert_overwrite", False)
        if self.partition_expressions and replaces_partitions:
            # These kinds replace the partitions the new rows hold: the expression's values would decide which rows
            # go, and the table is partitioned by columns only (SQLMesh's Spark engine refuses it too).
            expression = self.partition_expressions[0]
            raise ProjectError(
                f"model {self.name} is {self.kind.name}, which replaces the partitions its rows hold, but partitioned_by "
                f"{expression.written} is an expression",
                path=self.path,
                line=expression.line,
                hint=f"compute it as a column in the query (SELECT ..., {expression.written} AS part) and write "
                     "partitioned_by part",
            )
        if self.kind.needs_partitioned_by and not self.partitioned_by:
            raise ProjectError(
                f"model {self.name} is {self.kind.name} but has no partitioned_by",
                path=self.path,
                line=self.line,
                hint="name the partition key columns: partitioned_by region or partitioned_by (region, department)",
            )
        return self

    @property
    def schema_name(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def table_name(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def kind_name(self) -> str:
        return self.kind.name


class ExternalModel(Record):
    """A table the project reads but does not build (``external_models.yaml``)."""

    name: str
    columns: tuple[tuple[str, str], ...] = ()
    description: str | None = None
    path: Path
    line: int = 1
    """Line of the entry in its YAML file."""
    gateway: str | None = None
    """The gateway the table exists on; None: every gateway. Entries of other gateways are not loaded."""
    start: str | None = None
    """When the table's data begins (recorded as written; metadata)."""
    audits: tuple[AuditCall, ...] = ()
    """Checked against the table before the models that read it are computed (and as Dagster asset checks)."""
    fingerprint: str = ""
    """sha256 of name and columns: a changed schema of a source changes its readers' fingerprints."""


class UnitTest(Record):
    """A SQLMesh-format model unit test (``tests/*.yaml``)."""

    name: str
    model: str
    inputs: tuple[tuple[str, tuple[tuple[tuple[str, object], ...], ...]], ...]
    """(upstream model name, rows) where each row is a tuple of (column, value) pairs."""
    expected_rows: tuple[tuple[tuple[str, object], ...], ...]
    expected_query: str | None = None
    start: str | None = None
    end: str | None = None
    execution_time: str | None = None
    path: Path
    line: int = 1
    """Line of the test's name in its YAML file."""
    input_queries: tuple[tuple[str, str], ...] = ()
    """(upstream model name, Spark SQL query) for inputs given as ``query:`` instead of rows."""
    expected_ctes: tuple[tuple[str, tuple[tuple[tuple[str, object], ...], ...], str | None], ...] = ()
    """``outputs: ctes:``: (CTE name, expected rows, or the Spark SQL query giving them) per named CTE of the
    model's query."""
    checks_query: bool = True
    """False when the outputs name CTEs only: the model's own output is then not compared."""
    variables: tuple[tuple[str, str | int | float | bool], ...] = ()
    """``vars:`` other than start, end and execution_time (lower-cased names): variables of the model's rendering,
    over the project's own, as @name and @VAR('name'), as in SQLMesh (a
    test's ``start_date`` is the one ``@start_date`` gives)."""
    model_query: str | None = None
    """The SQL model's query read with ``variables`` (None: the model's own query serves)."""
    partial: tuple[str, ...] = ()
    """The outputs compared on the columns they name only (SQLMesh's ``partial: true``): ``""`` for the query, else
    CTE names. Any other output expects NULL in each column it leaves out, as SQLMesh does."""
