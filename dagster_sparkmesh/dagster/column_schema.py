"""Column schemas of SQL models that declare none, derived with sqlglot, so Dagster can show columns and lineage.

Models are visited parents first: a parent's columns are its declared ones (seeds, externals, Python models,
``columns (...)``) or the ones derived here. With every parent known, sqlglot qualifies the query (expanding
``*``) and annotates its types; otherwise the projection's names are kept without types. A query whose columns
cannot be named (a ``*`` over an unknown parent) gets no schema rather than a guessed one. Pure: no Spark.
"""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from dagster_sparkmesh.project.dag import topological_order
from dagster_sparkmesh.project.records import Project

Columns = tuple[tuple[str, str | None], ...]
"""(column, Spark type or None when unknown) pairs, in query order."""

_UNKNOWN_TYPES = {exp.DataType.Type.UNKNOWN, exp.DataType.Type.NULL}


def derive_column_schemas(project: Project) -> dict[str, Columns]:
    """Model name → derived columns, for the SQL models without declared columns whose columns can be named."""
    known: dict[str, Columns] = {name: tuple(ext.columns) for name, ext in project.external_models.items() if ext.columns}
    derived: dict[str, Columns] = {}
    for name in topological_order(project.models):
        model = project.models[name]
        if model.columns:
            known[name] = tuple(model.columns)
            continue
        if model.source != "sql" or not model.query:
            continue
        parents = tuple(sorted((parent, known.get(parent, ())) for parent in model.depends_on))
        columns = query_columns(model.query, parents)
        if columns:
            known[name] = derived[name] = columns
    return derived


@lru_cache(maxsize=4096)
def query_columns(query: str, parents: tuple[tuple[str, Columns], ...]) -> Columns:
    """The output columns of ``query``; ``parents``: (table, its columns or () when unknown) per table read."""
    try:
        expression = sqlglot.parse_one(query, dialect="spark")
    except SqlglotError:
        return ()
    if not isinstance(expression, exp.Query):
        return ()
    if all(columns for _, columns in parents):
        typed = _typed_columns(expression, parents)
        if typed:
            return typed
    return _named_columns(expression)


def _typed_columns(expression: exp.Query, parents: tuple[tuple[str, Columns], ...]) -> Columns:
    schema: dict[str, dict[str, dict[str, str]]] = {}
    for table, columns in parents:
        db, _, name = table.rpartition(".")
        schema.setdefault(db, {})[name] = {column: type_ or "UNKNOWN" for column, type_ in columns}
    try:
        # qualify rewrites in place: keep the parsed tree intact for the names-only fallback
        qualified = qualify(expression.copy(), schema=schema, dialect="spark", validate_qualify_columns=False)
        annotated = annotate_types(qualified, schema=schema, dialect="spark")
    except (SqlglotError, KeyError, ValueError):
        return ()
    return tuple((select.alias_or_name, _type_name(select.type)) for select in annotated.selects) if not _has_star(annotated) else ()


def _named_columns(expression: exp.Query) -> Columns:
    if _has_star(expression):
        return ()
    names = expression.named_selects
    return tuple((name, None) for name in names) if names and all(names) else ()


def _has_star(expression: exp.Query) -> bool:
    return any(select.is_star for select in expression.selects)


def _type_name(data_type: exp.DataType | None) -> str | None:
    if data_type is None or data_type.this in _UNKNOWN_TYPES:
        return None
    return data_type.sql(dialect="spark")

