"""DirectCatalog: the metadata of Spark's own session catalog read inside the JVM of an in-process session.

In a local session a ``DESCRIBE TABLE`` or ``SHOW TABLES`` is parsed, planned and run, and its rows travel back
through a socket: 45-60 ms where the metastore's look-up itself takes 4-10 ms (measured on this machine's Derby
metastore). Every interval write into a period table asks twice (its data table's columns, its view's segments)
and the kept-FULL check asks for the view text of each input, so a daily run asks some 60 times. Here the same
answers come from the session catalog's own look-ups, without a statement.

Only where that catalog is the one a statement would ask: an in-process session (over Spark Connect there is no
JVM in this process, and the statements stay), ``spark_catalog`` not served by a lakehouse format's catalog
(Iceberg and Delta keep tables and views of their own there), a name of that catalog, and that catalog current
(a model's ``USE`` may have changed it for its own turn). Anywhere else ``serves`` says no and the caller asks
with a statement, as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession
from pyspark.sql.types import ArrayType, DataType, MapType, StructType

from dagster_sparkmesh.engine.described_columns import CatalogColumn, pads_strings, plain_string_type
from dagster_sparkmesh.engine.failures import error_class, spark_errors

SESSION_CATALOG = "spark_catalog"
_MAX_FIELDS_KEY = "spark.sql.debug.maxToStringFields"
_NOT_FOUND = ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND")
_NOT_FOUND_CLASSES = ("NoSuchTableException", "NoSuchDatabaseException", "NoSuchNamespaceException")

_LISTED_OPERATORS = frozenset({"!=", "<>", "case", "||"})
"""Listed by ``SHOW SYSTEM FUNCTIONS`` though no registry holds them (the parser turns them into expressions)."""


@dataclass(frozen=True)
class CatalogEntry:
    """A table or view as the session catalog holds it."""

    table_type: str
    """``MANAGED``, ``EXTERNAL`` or ``VIEW``, as ``spark.catalog.getTable`` names them."""
    view_text: str | None
    columns: tuple[CatalogColumn, ...] | None
    """In table order, partition columns marked, as ``DESCRIBE TABLE`` lists them; None for a type this PySpark
    cannot read from the catalog's schema (the statement is asked then)."""


class DirectCatalog:
    """Look-ups in the session catalog of one in-process session (``of`` gives None where there is none)."""

    def __init__(self, spark: SparkSession) -> None:
        self._session = spark._jsparkSession
        self._jvm = spark._jvm
        with spark_errors("the session catalog"):
            self._catalog = self._session.sessionState().catalog()
            # Spark's DESCRIBE prints a struct of more fields than this cut short: such a type is asked by statement.
            self._max_struct_fields = int(spark.conf.get(_MAX_FIELDS_KEY, "25") or 25)

    @classmethod
    def of(cls, spark: SparkSession) -> DirectCatalog | None:
        if getattr(spark, "_jsparkSession", None) is None:  # a Spark Connect session
            return None
        with spark_errors("the session's settings"):
            if spark.conf.get(f"spark.sql.catalog.{SESSION_CATALOG}", None):  # Iceberg's or Delta's session catalog
                return None
        return cls(spark)

    def serves(self, qualified: str) -> bool:
        """Whether a statement naming the table or view ``qualified`` would ask this catalog (a name of no other
        catalog, and Spark's own current)."""
        return _parts(qualified) is not None and self._current_catalog() == SESSION_CATALOG

    def serves_schema(self, schema: str) -> bool:
        return "." not in schema and self._current_catalog() == SESSION_CATALOG

    def entry(self, qualified: str) -> CatalogEntry | None:
        """The table or view (None when neither it nor its schema exists); only for a name it ``serves``."""
        schema, name = _parts(qualified)
        with spark_errors(f"catalog look-up of {qualified}"):
            identifier = self._jvm.org.apache.spark.sql.catalyst.TableIdentifier(name, self._jvm.scala.Some(schema))
            try:
                metadata = self._catalog.getTableMetadata(identifier)
            except (PySparkException, Py4JJavaError) as error:
                if _is_not_found(error):
                    return None
                raise
            view_text = metadata.viewText()
            return CatalogEntry(
                metadata.tableType().name(),
                view_text.get() if view_text.isDefined() else None,
                _columns(metadata, self._max_struct_fields),
            )

    def table_names(self, schema: str) -> set[str] | None:
        """The tables and views of ``schema`` (no temporary view), or None when the schema does not exist."""
        with spark_errors(f"catalog listing of {schema}"):
            try:
                listed = self._catalog.externalCatalog().listTables(schema.lower())
            except (PySparkException, Py4JJavaError) as error:
                if _is_not_found(error):
                    return None
                raise
            return set(listed.mkString("\n").split("\n")) - {""}

    def system_functions(self) -> frozenset[str]:
        """What ``SHOW SYSTEM FUNCTIONS`` lists (lower case): Spark's functions and table functions, and the
        operators it lists with them; read from Spark's function registries, without a statement (0.7-4 s for
        the statement in a fresh session, which plans it through the whole analyzer first)."""
        registries = self._jvm.org.apache.spark.sql.catalyst.analysis
        with spark_errors("the listing of Spark's functions"):
            listed = [registries.FunctionRegistry.functionSet(), registries.TableFunctionRegistry.functionSet()]
            names = {name.strip("`").lower() for found in listed for name in found.mkString("\n").split("\n")}
        return frozenset(names - {""} | _LISTED_OPERATORS)

    def _current_catalog(self) -> str:
        with spark_errors("the session's current catalog"):
            return self._session.sessionState().catalogManager().currentCatalog().name()


# Where Spark keeps a column's declared char(n)/varchar(n) type, the schema's type being string.
_DECLARED_STRING_TYPE = "__CHAR_VARCHAR_TYPE_STRING"


def _columns(metadata, max_struct_fields: int) -> tuple[CatalogColumn, ...] | None:
    """None: the statement's answer would differ (an empty schema, which DESCRIBE infers from the files; a struct
    DESCRIBE prints cut short) or cannot be read here (a type newer than this PySpark knows)."""
    partitions = set(metadata.partitionColumnNames().mkString("\n").split("\n")) - {""}
    try:
        fields = StructType.fromJson(json.loads(metadata.schema().json())).fields
    except (ValueError, KeyError, TypeError, PySparkException):
        return None
    if not fields or any(_widest_struct(field.dataType) > max_struct_fields for field in fields):
        return None
    return tuple(
        CatalogColumn(
            field.name,
            plain_string_type(field.dataType.simpleString()),
            field.name in partitions,
            field.metadata.get("comment") or None,
            pads_strings(field.metadata.get(_DECLARED_STRING_TYPE) or ""),
        )
        for field in fields
    )


def _widest_struct(data_type: DataType) -> int:
    """The most fields of a struct within ``data_type`` (0 for none)."""
    if isinstance(data_type, StructType):
        return max([len(data_type.fields), *(_widest_struct(f.dataType) for f in data_type.fields)])
    if isinstance(data_type, ArrayType):
        return _widest_struct(data_type.elementType)
    if isinstance(data_type, MapType):
        return max(_widest_struct(data_type.keyType), _widest_struct(data_type.valueType))
    return 0


def _parts(qualified: str) -> tuple[str, str] | None:
    """(schema, name) of a name in the session catalog, or None for another catalog's."""
    parts = qualified.split(".")
    if len(parts) == 3 and parts[0].lower() == SESSION_CATALOG:
        parts = parts[1:]
    return (parts[0], parts[1]) if len(parts) == 2 else None


def _is_not_found(error: PySparkException | Py4JJavaError) -> bool:
    """(PySpark turns the JVM's exceptions into its own, with their error class; a bare py4j error names its class.)"""
    if isinstance(error, Py4JJavaError):
        return error.java_exception.getClass().getName().rsplit(".", 1)[-1] in _NOT_FOUND_CLASSES
    return error_class(error) in _NOT_FOUND
