"""Column schemas of SQL models that declare none, derived with sqlglot: Dagster shows them (columns, lineage) and
an ``is_sql`` function reads them at load time (``evaluator.columns_to_types``, ``ModelColumns``).

Models are visited parents first: a parent's columns are its declared ones (seeds, externals, Python models,
``columns (...)``) or the ones derived here. With every parent known, sqlglot qualifies the query (expanding
``*``) and annotates its types; otherwise the projection's names are kept without types. A query whose columns
cannot be named (a ``*`` over an unknown parent) gets no schema rather than a guessed one. Pure: no Spark.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from dagster_sparkmesh.model.records import ExternalModel, Model
from dagster_sparkmesh.project.column_lineage import ColumnSources, trace_qualified
from dagster_sparkmesh.project.dag import topological_order
from dagster_sparkmesh.project.records import Project

Columns = tuple[tuple[str, str | None], ...]
"""(column, Spark type or None when unknown) pairs, in query order."""

_UNKNOWN_TYPES = {exp.DataType.Type.UNKNOWN, exp.DataType.Type.NULL}
# One dialect instance and one parsed type per type text: resolving "spark" and parsing a type on every call
# cost more than qualifying the query (a 1,000-model project must still build its definitions in seconds).
_SPARK = Dialect.get_or_raise("spark")


def derive_columns_and_lineage(project: Project) -> tuple[dict[str, Columns], dict[str, ColumnSources]]:
    """Model name → derived columns, for the SQL models without declared columns whose columns can be named; and
    the column lineage of the models whose queries were qualified to derive them
    (qualifying is most of the cost of both: one pass does the two)."""
    derivation = _derive(project.models, project.external_models)
    return derivation.derived, derivation.sources


class ModelColumns:
    """Each model's columns as ``evaluator.columns_to_types`` gives them (column → sqlglot ``DataType``, UNKNOWN
    where sqlglot cannot tell), over the models loaded so far. ``final``: no more models will load, so a name
    that is not known here never will be."""

    def __init__(self, models: Mapping[str, Model], externals: Mapping[str, ExternalModel], *, final: bool) -> None:
        self.models, self.externals, self.final = models, externals, final

    def known(self, name: str) -> bool:
        return name in self.models or name in self.externals

    def types(self, name: str) -> dict[str, exp.DataType] | None:
        """None when the model is not loaded yet, or its columns can be neither read nor derived."""
        if not self.known(name):
            return None
        # Only the model's ancestors are derived: a query asks for one or two parents, not the whole project.
        columns = _derive(_ancestors(name, self.models), self.externals).known.columns.get(name)
        if columns is None:
            return None
        return {column: _data_type(type_ or "UNKNOWN").copy() for column, type_ in columns}


def _ancestors(name: str, models: Mapping[str, Model]) -> dict[str, Model]:
    """``name`` and the models it reads, transitively; a model reading its own table does not depend on itself
    (the loader has not yet turned that into ``depends_on_self``)."""
    found: dict[str, Model] = {}
    stack = [name]
    while stack:
        current = stack.pop()
        model = models.get(current)
        if model is None or current in found:
            continue
        if current in model.depends_on:
            model = model.model_copy(update={"depends_on": model.depends_on - {current}})
        found[current] = model
        stack.extend(model.depends_on)
    return found


class _Derivation:
    def __init__(self) -> None:
        self.known = KnownColumns()
        self.derived: dict[str, Columns] = {}
        self.sources: dict[str, ColumnSources] = {}
        """Column lineage of the models whose queries were qualified here (traced in the same pass)."""


def _derive(models: Mapping[str, Model], externals: Mapping[str, ExternalModel]) -> _Derivation:
    result = _Derivation()
    known = result.known
    for name, external in externals.items():
        if external.columns:
            known.add(name, tuple(external.columns))
    for name in topological_order(models):
        model = models[name]
        if model.columns:
            known.add(name, tuple(model.columns))
            continue
        if model.source != "sql" or not model.query:
            continue
        parents = tuple(sorted((parent, known.columns.get(parent, ())) for parent in model.depends_on))
        columns, sources = _columns_and_sources(model.query, parents, known.schema)
        if sources is not None:
            result.sources[name] = sources
        if columns:
            known.add(name, columns)
            result.derived[name] = columns
    return result


class KnownColumns:
    """Columns known so far, also as one sqlglot schema: building a schema per query costs more than the query."""

    def __init__(self) -> None:
        self.columns: dict[str, Columns] = {}
        self.schema = MappingSchema(dialect=_SPARK, normalize=False)

    def add(self, table: str, columns: Columns) -> None:
        self.columns[table] = columns
        db, _, name = table.rpartition(".")
        node = exp.Table(this=exp.to_identifier(name), db=exp.to_identifier(db) if db else None)  # no parsing
        self.schema.add_table(node, {column: _data_type(type_ or "UNKNOWN") for column, type_ in columns}, dialect=_SPARK)


def rewritten_parents_first(
    models: Mapping[str, Model],
    externals: Mapping[str, ExternalModel],
    wanted: set[str],
    rewrite: Callable[[Model, KnownColumns], Model],
) -> dict[str, Model]:
    """``models`` (parents before children) with ``rewrite(model, known)`` applied to those ``wanted``, in one pass:
    the columns of every model a wanted one reads (declared, or derived from its query as rewritten) are known
    before it. Only those are derived: asking ``ModelColumns`` model by model derives each one's ancestors again."""
    if not wanted:
        return dict(models)
    read = _read_by(wanted, models)
    known = KnownColumns()
    for name, external in externals.items():
        if external.columns:
            known.add(name, tuple(external.columns))
    resolved = dict(models)
    for name, model in models.items():
        if name in wanted:
            model = resolved[name] = rewrite(model, known)
        if name not in read:
            continue
        if model.columns:
            known.add(name, tuple(model.columns))
        elif model.source == "sql" and model.query:
            parents = tuple(sorted((parent, known.columns.get(parent, ())) for parent in model.depends_on - {name}))
            columns = query_columns(model.query, parents, known.schema)
            if columns:
                known.add(name, columns)
    return resolved


def _read_by(wanted: set[str], models: Mapping[str, Model]) -> set[str]:
    """The models the wanted ones read, directly or through others: only their columns are needed."""
    found: set[str] = set()
    stack = [parent for name in wanted for parent in models[name].depends_on - {name}]
    while stack:
        name = stack.pop()
        if name in found or name not in models:
            continue
        found.add(name)
        stack.extend(models[name].depends_on - {name})
    return found


_Derived = tuple[Columns, "ColumnSources | None"]
_CACHE: dict[tuple[str, tuple[tuple[str, Columns], ...]], _Derived] = {}
_CACHE_SIZE = 8192


def query_columns(query: str, parents: tuple[tuple[str, Columns], ...], schema: MappingSchema) -> Columns:
    """The output columns of ``query``; ``parents``: (table, its columns or () when unknown) per table read, the
    known ones also in ``schema``."""
    return _columns_and_sources(query, parents, schema)[0]


def _columns_and_sources(query: str, parents: tuple[tuple[str, Columns], ...], schema: MappingSchema) -> _Derived:
    """The columns, and the column lineage when the query could be qualified (None otherwise). Cached on
    (query, parents): definitions are rebuilt with the same models."""
    key = (query, parents)
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        _CACHE[key] = _derive_query(query, all(columns for _, columns in parents), schema)
    return _CACHE[key]


def _derive_query(query: str, parents_known: bool, schema: MappingSchema) -> _Derived:
    try:
        expression = sqlglot.parse_one(query, dialect=_SPARK)
    except SqlglotError:
        return (), None
    if not isinstance(expression, exp.Query):
        return (), None
    if parents_known:
        # qualify rewrites in place: the names-only fallback parses again (rare, and cheaper than a copy each time)
        typed, sources = _typed_columns(expression, schema)
        if typed:
            return typed, sources
        expression = sqlglot.parse_one(query, dialect=_SPARK)
    return _named_columns(expression), None


def _typed_columns(expression: exp.Query, schema: MappingSchema) -> _Derived:
    try:
        qualified = qualify(expression, schema=schema, dialect=_SPARK, validate_qualify_columns=False)
        sources = trace_qualified(qualified)  # before types are annotated: the walk needs only the names
        annotated = annotate_types(qualified, schema=schema, dialect=_SPARK)
    except (SqlglotError, KeyError, ValueError):
        return (), None
    if _has_star(annotated):
        return (), None
    return tuple((select.alias_or_name, _type_name(select.type)) for select in annotated.selects), sources


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
