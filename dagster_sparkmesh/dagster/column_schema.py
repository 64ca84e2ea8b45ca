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
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from dagster_sparkmesh.project.dag import topological_order
from dagster_sparkmesh.project.records import Project

Columns = tuple[tuple[str, str | None], ...]
"""(column, Spark type or None when unknown) pairs, in query order."""

_UNKNOWN_TYPES = {exp.DataType.Type.UNKNOWN, exp.DataType.Type.NULL}
# One dialect instance and one parsed type per type text: resolving "spark" and parsing a type on every call
# cost more than qualifying the query (a 1,000-model project must still build its definitions in seconds).
_SPARK = Dialect.get_or_raise("spark")


def derive_column_schemas(project: Project) -> dict[str, Columns]:
    """Model name → derived columns, for the SQL models without declared columns whose columns can be named."""
    known = _KnownColumns()
    for name, external in project.external_models.items():
        if external.columns:
            known.add(name, tuple(external.columns))
    derived: dict[str, Columns] = {}
    for name in topological_order(project.models):
        model = project.models[name]
        if model.columns:
            known.add(name, tuple(model.columns))
            continue
        if model.source != "sql" or not model.query:
            continue
        parents = tuple(sorted((parent, known.columns.get(parent, ())) for parent in model.depends_on))
        columns = query_columns(model.query, parents, known.schema)
        if columns:
            known.add(name, columns)
            derived[name] = columns
    return derived


class _KnownColumns:
    """Columns known so far, also as one sqlglot schema: building a schema per query costs more than the query."""

    def __init__(self) -> None:
        self.columns: dict[str, Columns] = {}
        self.schema = MappingSchema(dialect=_SPARK, normalize=False)

    def add(self, table: str, columns: Columns) -> None:
        self.columns[table] = columns
        db, _, name = table.rpartition(".")
        node = exp.Table(this=exp.to_identifier(name), db=exp.to_identifier(db) if db else None)  # no parsing
        self.schema.add_table(node, {column: _data_type(type_ or "UNKNOWN") for column, type_ in columns}, dialect=_SPARK)


_CACHE: dict[tuple[str, tuple[tuple[str, Columns], ...]], Columns] = {}
_CACHE_SIZE = 8192


def query_columns(query: str, parents: tuple[tuple[str, Columns], ...], schema: MappingSchema) -> Columns:
    """The output columns of ``query``; ``parents``: (table, its columns or () when unknown) per table read, the
    known ones also in ``schema``. Cached on (query, parents): definitions are rebuilt with the same models."""
    key = (query, parents)
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        _CACHE[key] = _query_columns(query, all(columns for _, columns in parents), schema)
    return _CACHE[key]


def _query_columns(query: str, parents_known: bool, schema: MappingSchema) -> Columns:
    try:
        expression = sqlglot.parse_one(query, dialect=_SPARK)
    except SqlglotError:
        return ()
    if not isinstance(expression, exp.Query):
        return ()
    if parents_known:
        # qualify rewrites in place: the names-only fallback parses again (rare, and cheaper than a copy each time)
        typed = _typed_columns(expression, schema)
        if typed:
            return typed
        expression = sqlglot.parse_one(query, dialect=_SPARK)
    return _named_columns(expression)


def _typed_columns(expression: exp.Query, schema: MappingSchema) -> Columns:
    try:
        qualified = qualify(expression, schema=schema, dialect=_SPARK, validate_qualify_columns=False)
        annotated = annotate_types(qualified, schema=schema, dialect=_SPARK)
    except (SqlglotError, KeyError, ValueError):
        return ()
    if _has_star(annotated):
        return ()
    return tuple((select.alias_or_name, _type_name(select.type)) for select in annotated.selects)


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
    if not data_type.expressions and not data_type.args.get("nested"):
        return _simple_type_name(data_type.this)
    return data_type.sql(dialect=_SPARK)


@lru_cache(maxsize=None)
def _simple_type_name(type_: exp.DataType.Type) -> str:
    return exp.DataType.build(type_).sql(dialect=_SPARK)


@lru_cache(maxsize=1024)
def _data_type(text: str) -> exp.DataType:
    return exp.DataType.build(text, dialect=_SPARK)
