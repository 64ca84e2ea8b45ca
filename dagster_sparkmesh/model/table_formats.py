"""Which lakehouse table format (Apache Iceberg or Delta Lake) a model's physical table is written in, if any.

SQLMesh's Spark engine writes ``USING <table_format>`` (else ``USING <storage_format>``): ``iceberg`` and
``delta`` there are table formats with atomic commits, which a lakehouse table here is too (``engine.lakehouse``
and ``execution.writes.lakehouse_table``): one table, written in one commit per write, with no layout of ours in front.
Any other value (``parquet``, ``orc``, ``hive``) keeps the default layouts, whose files are parquet.

A kind without a lakehouse write strategy yet keeps the default layouts whatever the model asks; its format is
then not part of its fingerprint, so that the day its kind gains one, the model gets a new version (and a new
table in the format) instead of a lakehouse write into a table of the other layout.
"""

from __future__ import annotations

from collections.abc import Iterable

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.records import Model

ICEBERG = "iceberg"
DELTA = "delta"
ICEBERG_CATALOG_CLASS = "org.apache.iceberg.spark.SparkCatalog"
"""Iceberg's Spark catalog (a catalog of its own, beside the session's): the loader places models there
(``project.catalogs``) and the engine checks a session's catalog is one (``engine.lakehouse``)."""
LAKEHOUSE_FORMATS = (ICEBERG, DELTA)


def requested_format(model: Model) -> str | None:
    """The lakehouse format the model's ``table_format`` (else ``storage_format``) names, whatever its kind."""
    for written in (model.table_format, model.storage_format):
        if written in LAKEHOUSE_FORMATS:
            return written
    return None


def lakehouse_format(model: Model) -> str | None:
    """The format the model's physical table is written in: ``iceberg``, ``delta`` or None (default layouts)."""
    if not model.kind.lakehouse_table:  # (a trait of the kind: ``model.kinds``)
        return None
    return requested_format(model)


def project_lakehouse_format(models: Iterable[Model]) -> str | None:
    """The one lakehouse format a project's session must serve, or None.

    Both formats own Spark's session catalog (``spark_catalog``) when they are on (``engine.lakehouse``), so one
    session serves one of them: a project that asks for both is refused, naming a model of each."""
    first_of: dict[str, Model] = {}
    for model in models:
        written = lakehouse_format(model)
        if written is not None:
            first_of.setdefault(written, model)
    if len(first_of) > 1:
        iceberg, delta = first_of[ICEBERG], first_of[DELTA]
        raise ProjectError(
            f"models ask for both Iceberg ({iceberg.name}) and Delta ({delta.name}) tables: one project's Spark "
            "session serves one lakehouse format",
            path=delta.path,
            line=delta.line,
            hint="use one table_format for the project (model_defaults: {table_format: iceberg} or delta)",
        )
    return next(iter(first_of), None)


def drops_columns(model: Model) -> bool:
    """Whether the model's table can drop a column in place (a forward-only change that drops one): an Iceberg
    table (a change of its metadata), or a Delta table whose columns are mapped by name or id
    (``physical_properties (delta.columnMapping.mode = 'name')``); Spark drops no column of a plain Delta table."""
    written = lakehouse_format(model)
    if written == DELTA:
        return dict(model.physical_properties).get("delta.columnMapping.mode", "").lower() in ("name", "id")
    return written == ICEBERG


def property_text(value: object) -> str:
    """A table property's value as Spark's ``TBLPROPERTIES`` holds it: text (booleans as ``true``/``false``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


FILE_FORMAT_PROPERTY = "write.format.default"


def with_file_format(
    table_format: str | None, storage_format: str | None, properties: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    """A lakehouse table's properties with its files' format: SQLMesh's Spark engine writes a ``storage_format``
    given beside a ``table_format`` as the table property ``write.format.default`` (``orc`` files in an Iceberg
    table); a property the model sets itself wins."""
    if table_format not in LAKEHOUSE_FORMATS or not storage_format or storage_format in LAKEHOUSE_FORMATS:
        return properties
    if FILE_FORMAT_PROPERTY in dict(properties):
        return properties
    return (*properties, (FILE_FORMAT_PROPERTY, storage_format))


def merged_properties(
    defaults: tuple[tuple[str, str], ...], own: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    """``model_defaults``' physical properties with the model's over them, key by key, as SQLMesh merges them."""
    return tuple({**dict(defaults), **dict(own)}.items())
