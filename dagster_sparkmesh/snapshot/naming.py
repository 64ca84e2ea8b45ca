"""Names of physical tables and environment views. Pure; every generated identifier is validated here.

Physical table: ``sparkmesh__<schema>.<schema>__<name>__<version>``; view: ``<schema>.<name>`` in prod and
``<schema>__<env>.<name>`` elsewhere. All lower case (the Hive metastore lower-cases names anyway).

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


def split_model_name(model_name: str) -> tuple[str, str]:
    schema, _, table = model_name.partition(".")
    if not table:
        raise SparkMeshError(f"model name {model_name!r} must be qualified as schema.name")
    return validate_identifier(schema, "schema name"), validate_identifier(table, "model name")


def physical_schema(model_name: str) -> str:
    schema, _ = split_model_name(model_name)
    return f"{PHYSICAL_SCHEMA_PREFIX}{schema}"


def physical_table(model_name: str, version: str) -> str:
    schema, table = split_model_name(model_name)
    version = validate_identifier(version, "version")
    return f"{PHYSICAL_SCHEMA_PREFIX}{schema}.{schema}__{table}__{version}"


def view_schema(model_name: str, environment: str) -> str:
    schema, _ = split_model_name(model_name)
    environment = validate_identifier(environment, "environment name")
    return schema if environment == PROD else f"{schema}__{environment}"


def view_name(model_name: str, environment: str) -> str:
    _, table = split_model_name(model_name)
    return f"{view_schema(model_name, environment)}.{table}"


def quote(qualified_name: str) -> str:
    """Backtick-quote each part of an already validated ``schema.table`` name for Spark SQL."""
    return ".".join(quote_identifier(part) for part in qualified_name.split("."))


def quote_identifier(name: str) -> str:
    """One backtick-quoted identifier (a column, a temp view). Column names come from catalogs and Python models
    unvalidated, so an embedded backtick is doubled: the name can never end the quoting early."""
    return "`" + name.replace("`", "``") + "`"
