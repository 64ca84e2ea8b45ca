"""Names of physical tables and environment views. Pure; every generated identifier is validated here.

Physical table: ``sparkmesh__<schema>.<schema>__<name>__<version>``; view: ``<schema>.<name>`` in prod and
``<schema>__<env>.<name>`` elsewhere. All lower case (the Hive metastore lower-cases names anyway). A model named
without a schema (``name orders``) is ``default.orders`` from the moment it is read, as SQLMesh puts it in the schema
``default``: its table is ``sparkmesh__default.default__orders__<version>``, its views ``default.orders`` and
``default__<env>.orders``.

Catalogs. A model named ``catalog.schema.table`` lives in that Spark catalog when the project's connection
declares it (``spark.sql.catalog.<catalog>`` in its ``config``: an Iceberg catalog, Unity Catalog...), as with
SQLMesh on Spark: its table is ``<catalog>.sparkmesh__<schema>.<schema>__<name>__<version>`` and its views
``<catalog>.<schema>.<name>`` and ``<catalog>.<schema>__<env>.<name>``. The model, its snapshots and its environment
entries carry that catalog (``catalog``, None elsewhere), so that the objects of a version stay where they were
written whatever the configuration says later. Otherwise every object lives in the session's catalog
(``spark_catalog``), and a catalog in a name means (SQLMesh's own examples, written for DuckDB, use such names):

- ``spark_catalog.schema.table`` is ``schema.table``: the catalog is dropped when the name is read.
- any other catalog is kept in the model's name and folded into its schema here: ``ecommerce.silver.orders``
  has the schema ``ecommerce__silver``, so its table is ``sparkmesh__ecommerce__silver.ecommerce__silver__orders__<v>``
  and its views ``ecommerce__silver.orders`` (prod) and ``ecommerce__silver__<env>.orders``. No catalog named
  ``ecommerce`` needs to exist (SQLMesh would write into a Spark catalog of that name). A two-part model named
  ``ecommerce__silver.orders`` would share those objects; the loader refuses the pair
  (``project.dag.check_folded_names``).

References follow the same rule (``project.sql.model.reference_name``): ``ecommerce.silver.orders`` and
``spark_catalog.db.t`` in a query name the model or external model ``ecommerce.silver.orders`` and ``db.t``; a
catalog-qualified table that is neither (``lake.raw.events`` of another Spark catalog) is read as written.

A forward-only change previewed in a development environment writes a table of its own, whose version is the
shared version followed by ``__preview_`` and a digest of the snapshot (``plan.previews``): it never names a
table prod uses.
"""

from __future__ import annotations

import re

from dagster_sparkmesh.errors import SparkMeshError

PROD = "prod"
PHYSICAL_SCHEMA_PREFIX = "sparkmesh__"
PREVIEW_MARKER = "__preview_"
PERIOD_DATA_SUFFIX = "__data"
DEFAULT_CATALOG = "spark_catalog"
DEFAULT_SCHEMA = "default"
"""The schema of a model or table named without one, as in SQLMesh; Spark's own default database."""
CATALOG_SEPARATOR = "__"
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")


def validate_identifier(text: str, what: str) -> str:
    """Return ``text`` lower-cased if it is a plain identifier; refuse anything that could escape a name."""
    lowered = text.lower()
    if not _IDENTIFIER.match(lowered):
        raise SparkMeshError(
            f"invalid {what} {text!r}",
            hint="use letters, digits and underscores only, starting with a letter or underscore",
        )
    return lowered


def is_preview_version(version: str) -> bool:
    """Whether a version names a development preview table (see ``plan.previews``), which prod never uses."""
    return PREVIEW_MARKER in version


def qualified_name(parts: list[str] | tuple[str, ...], what: str = "model name") -> str:
    """``[[catalog,] schema,] table`` as one lower-case name: ``schema.table`` or ``catalog.schema.table``. A bare
    ``table`` is in the schema ``default``, as SQLMesh puts it; the session's default catalog is dropped, since it
    names the same table as the two-part name."""
    if len(parts) not in (1, 2, 3):
        raise SparkMeshError(
            f"{what} {'.'.join(parts)!r} must be name, schema.name or catalog.schema.name",
            hint="name models and tables as schema.table (a name without a schema is in the schema default; "
            "a catalog other than spark_catalog becomes part of the schema)",
        )
    lowered = [validate_identifier(part, what) for part in parts]
    if len(lowered) == 1:
        lowered = [DEFAULT_SCHEMA, *lowered]
    if len(lowered) == 3 and lowered[0] == DEFAULT_CATALOG:
        lowered = lowered[1:]
    return ".".join(lowered)


def with_default_schema(name: str) -> str:
    """A name a user typed (a selector, a declared name) as the project keys its models: ``orders`` is
    ``default.orders``; a qualified name is returned as it is."""
    return name if "." in name else f"{DEFAULT_SCHEMA}.{name}"


def without_default_catalog(name: str, catalog: str | None) -> str:
    """``catalog.schema.table`` as ``schema.table`` when ``catalog`` is the project's default catalog (the name
    SQLMesh gives its own models and tables, e.g. in the external models ``create_external_models`` writes)."""
    parts = name.split(".")
    return ".".join(parts[1:]) if catalog and len(parts) == 3 and parts[0] == catalog.lower() else name


def split_model_name(model_name: str, catalog: str | None = None) -> tuple[str, str]:
    """``(schema, table)`` of the objects a model owns; a catalog other than the model's own Spark catalog
    (``catalog``) is folded into the schema (see above)."""
    parts = model_name.split(".")
    if len(parts) not in (2, 3) or not all(parts):
        raise SparkMeshError(f"model name {model_name!r} must be qualified as schema.name or catalog.schema.name")
    if catalog is not None:
        if len(parts) != 3 or parts[0].lower() != catalog:
            raise SparkMeshError(f"model name {model_name!r} does not name the catalog {catalog!r} it lives in")
        return validate_identifier(parts[1], "schema name"), validate_identifier(parts[2], "model name")
    if len(parts) == 3 and parts[0].lower() != DEFAULT_CATALOG:
        catalog, schema = validate_identifier(parts[0], "catalog name"), validate_identifier(parts[1], "schema name")
        return f"{catalog}{CATALOG_SEPARATOR}{schema}", validate_identifier(parts[2], "model name")
    return validate_identifier(parts[-2], "schema name"), validate_identifier(parts[-1], "model name")


def folded_name(model_name: str) -> str:
    """The two-part name whose objects a model owns: ``ecommerce.silver.orders`` → ``ecommerce__silver.orders``."""
    return ".".join(split_model_name(model_name))


def _in_catalog(catalog: str | None) -> str:
    """The prefix that places a schema in the model's own Spark catalog (none: the session's)."""
    return f"{validate_identifier(catalog, 'catalog name')}." if catalog is not None else ""


def physical_schema(model_name: str, catalog: str | None = None) -> str:
    schema, _ = split_model_name(model_name, catalog)
    return f"{_in_catalog(catalog)}{PHYSICAL_SCHEMA_PREFIX}{schema}"


def physical_table(model_name: str, version: str, catalog: str | None = None) -> str:
    schema, table = split_model_name(model_name, catalog)
    version = validate_identifier(version, "version")
    return f"{_in_catalog(catalog)}{PHYSICAL_SCHEMA_PREFIX}{schema}.{schema}__{table}__{version}"


def period_data_table(physical: str) -> str:
    """The table holding a period table's rows (``engine.period_tables``); ``physical`` is the view over it that
    everything else reads. Physical names end with their version (``__v...``), so no physical name ends so."""
    return f"{physical}{PERIOD_DATA_SUFFIX}"


def view_schema(model_name: str, environment: str, catalog: str | None = None) -> str:
    schema, _ = split_model_name(model_name, catalog)
    environment = validate_identifier(environment, "environment name")
    return _in_catalog(catalog) + (schema if environment == PROD else f"{schema}__{environment}")


def view_name(model_name: str, environment: str, catalog: str | None = None) -> str:
    _, table = split_model_name(model_name, catalog)
    return f"{view_schema(model_name, environment, catalog)}.{table}"


def schema_of(qualified: str) -> str:
    """The schema part of a qualified table or view name, with its catalog if it has one."""
    return qualified.rsplit(".", 1)[0]


def quote(qualified_name: str) -> str:
    """Backtick-quote each part of an already validated ``schema.table`` name for Spark SQL."""
    return ".".join(quote_identifier(part) for part in qualified_name.split("."))


def quote_identifier(name: str) -> str:
    """One backtick-quoted identifier (a column, a temp view). Column names come from catalogs and Python models
    unvalidated, so an embedded backtick is doubled: the name can never end the quoting early."""
    return "`" + name.replace("`", "``") + "`"
