"""Which Spark catalog each model lives in (``snapshot.naming``).

A model named ``catalog.schema.table`` lives in that catalog when the project's connection declares it, as a Spark
team declares a catalog: ``spark.sql.catalog.<catalog>`` (its implementation class) in the connection's
``config``. SQLMesh on Spark writes such a model's table and views into that catalog; so does sparkmesh. A catalog
the connection does not declare is folded into the schema instead (SQLMesh's examples written for DuckDB name one).

A declared catalog other than Spark's session catalog holds the tables of its format only: an Iceberg catalog
(``org.apache.iceberg.spark.SparkCatalog``) makes its models Iceberg tables even when they do not say so (as
SQLMesh's ``CREATE TABLE`` there does), and refuses a kind without a lakehouse write strategy (a seed, a view, an
embedded model's table is written by the default layouts, parquet tables and views of Spark's own catalog).
"""

from __future__ import annotations

from collections.abc import Mapping

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.model.table_formats import ICEBERG, ICEBERG_CATALOG_CLASS, lakehouse_format, requested_format
from dagster_sparkmesh.project.config import SparkConnection
from dagster_sparkmesh.snapshot.naming import DEFAULT_CATALOG

_CATALOG_KEY = "spark.sql.catalog."


def declared_catalogs(connection: SparkConnection) -> dict[str, str]:
    """Catalog name → implementation class, for each catalog the connection's ``config`` declares (not the
    session's own, whose options are also ``spark.sql.catalog.spark_catalog.*``)."""
    declared: dict[str, str] = {}
    for key, value in connection.config.items():
        name = key[len(_CATALOG_KEY):] if key.startswith(_CATALOG_KEY) else ""
        if name and "." not in name and name.lower() != DEFAULT_CATALOG:
            declared[name.lower()] = value
    return declared


def placed_in_catalogs(models: Mapping[str, Model], connection: SparkConnection) -> dict[str, Model]:
    """The models, each with the catalog it lives in (``Model.catalog``) and the format that catalog implies."""
    declared = declared_catalogs(connection)
    if not declared:
        return dict(models)
    return {name: _placed(model, declared) for name, model in models.items()}


def _placed(model: Model, declared: Mapping[str, str]) -> Model:
    parts = model.name.split(".")
    if len(parts) != 3 or parts[0] not in declared:
        return model
    catalog = parts[0]
    implied = ICEBERG if declared[catalog] == ICEBERG_CATALOG_CLASS and requested_format(model) is None else None
    placed = model.model_copy(update={"catalog": catalog, **({"table_format": implied} if implied else {})})
    if placed.kind.has_physical_layer and lakehouse_format(placed) is None:
        raise ProjectError(
            f"model {model.name} ({model.kind.name}) cannot live in catalog {catalog}: only Iceberg and Delta "
            "tables of the incremental, FULL, SCD type 2 and CUSTOM kinds are written outside Spark's session catalog",
            path=model.path,
            line=model.line,
            hint=f"give it a table_format (iceberg or delta) that catalog holds, or name it without the catalog "
            f"{catalog} (schema.table lives in spark_catalog)",
        )
    return placed
