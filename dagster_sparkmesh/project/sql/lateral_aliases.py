"""Aliases of a SELECT list referenced inside a window of the same list, written out for Spark.

DuckDB, Snowflake and Redshift let a SELECT item name an alias defined earlier in the same list ("lateral column
aliases"), also inside a window: ``(close - prev) / prev AS ret, STDDEV(ret) OVER (ORDER BY d) AS vol``. Spark
resolves such aliases too, but not inside a window (``UNSUPPORTED_FEATURE.LATERAL_COLUMN_ALIAS_IN_WINDOW``), so the
model's backfill failed where SQLMesh on DuckDB computes it. Here each such reference inside a window (its
function's arguments, PARTITION BY, ORDER BY) is replaced by the aliased expression, parenthesised; an alias made
of earlier aliases is written out through them.

A name that is also a column of a source of the SELECT is that column in DuckDB (checked: the source column wins
over the alias), so a reference is replaced only when the columns of every source are known and none has that name:
the sources are CTEs or subqueries of the query itself (their SELECT lists, ``*`` expanded through their own
sources), or tables whose columns the caller knows (``known_columns``). A SELECT reading a table whose columns are
unknown is left as it was written. DuckDB refuses an alias whose expression holds a subquery: it is never copied.

A model's query is parsed before its parents are loaded, so ``with_spark_equivalents`` writes out the references it
can tell with the query alone (sources that are its CTEs or subqueries); once every model is loaded, the loader
writes out the rest with its parents' columns (``with_window_aliases_over_models``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dagster_sparkmesh.model.records import ExternalModel, Model, UnitTest
from dagster_sparkmesh.project.sql.references import reference_name

# Dialects whose engines resolve a lateral alias inside a window as they do elsewhere in the SELECT list.
LATERAL_ALIAS_DIALECTS = frozenset({"duckdb", "snowflake", "redshift"})

KnownColumns = Callable[[exp.Table], "tuple[str, ...] | None"]


def _unknown(_table: exp.Table) -> tuple[str, ...] | None:
    return None


def with_window_aliases_written_out(
    statement: exp.Expression, dialect: str, known_columns: KnownColumns = _unknown
) -> exp.Expression:
    """``statement`` with each lateral alias referenced in a window replaced by its expression, where ``dialect``
    resolves lateral aliases and the reference cannot be a source's column."""
    if dialect.lower() not in LATERAL_ALIAS_DIALECTS:
        return statement
    for select in list(statement.find_all(exp.Select)):
        _write_out_in(select, known_columns)
    return statement


def _write_out_in(select: exp.Select, known_columns: KnownColumns) -> None:
    if not any(_own_nodes(projection, exp.Window) for projection in select.expressions):
        return
    source_columns = _source_columns(select, known_columns, frozenset())
    if source_columns is None:
        return  # a source of unknown columns: any name may be its column
    aliases: dict[str, exp.Expression] = {}  # earlier aliases, each written out through the ones before it
    for projection in select.expressions:
        for window in _own_nodes(projection, exp.Window):
            _replace_aliases(window, aliases, source_columns)
        if isinstance(projection, exp.Alias) and not projection.this.find(exp.Query):
            written_out = _replace_aliases(projection.this.copy(), aliases, source_columns)
            aliases[projection.alias.lower()] = written_out


def _replace_aliases(node: exp.Expression, aliases: Mapping[str, exp.Expression], sources: set[str]) -> exp.Expression:
    """``node`` with its unqualified columns that name an earlier alias (and no source column) replaced."""
    for column in _own_nodes(node, exp.Column):
        name = column.name.lower()
        if column.table or name in sources or name not in aliases:
            continue
        replacement = _parenthesised(aliases[name].copy())
        if column is node:
            return replacement
        column.replace(replacement)
    return node


def _parenthesised(expression: exp.Expression) -> exp.Expression:
    """The expression in parentheses, so that it keeps its meaning wherever it lands, unless it is one term."""
    if isinstance(expression, (exp.Paren, exp.Column, exp.Literal, exp.Func)):
        return expression
    return exp.Paren(this=expression)


def _own_nodes(node: exp.Expression, kind: type) -> list:
    """The nodes of ``kind`` in ``node`` outside nested queries (a subquery's SELECT list is its own scope)."""
    found = []
    for child in node.walk(prune=lambda item: item is not node and isinstance(item, exp.Query)):
        if isinstance(child, kind) and not (child is not node and isinstance(child, exp.Query)):
            found.append(child)
    return found


def _source_columns(select: exp.Select, known_columns: KnownColumns, seen: frozenset[str]) -> set[str] | None:
    """The lower-cased column names of all the sources the SELECT reads, or None when any source's are unknown."""
    if select.args.get("laterals"):
        return None
    sources = [select.args["from_"].this] if select.args.get("from_") else []
    for join in select.args.get("joins") or ():
        sources.append(join.this)
    names: set[str] = set()
    for source in sources:
        columns = _columns_of(source, _visible_ctes(select), known_columns, seen)
        if columns is None:
            return None
        names.update(column.lower() for column in columns)
    return names


def _columns_of(
    source: exp.Expression, ctes: Mapping[str, exp.CTE], known_columns: KnownColumns, seen: frozenset[str]
) -> list[str] | None:
    alias = source.args.get("alias")
    if isinstance(alias, exp.TableAlias) and alias.columns:
        return [column.name for column in alias.columns]
    if isinstance(source, exp.Subquery):
        return _output_columns(source.this, known_columns, seen)
    if not isinstance(source, exp.Table) or not isinstance(source.this, exp.Identifier):
        return None  # a table function, UNNEST, VALUES without column names ...
    name = source.name.lower()
    if not source.args.get("db") and name in ctes and name not in seen:
        cte = ctes[name]
        if cte.args.get("alias") and cte.args["alias"].columns:
            return [column.name for column in cte.args["alias"].columns]
        return _output_columns(cte.this, known_columns, seen | {name})
    columns = known_columns(source)
    return list(columns) if columns is not None else None


def _output_columns(query: exp.Expression, known_columns: KnownColumns, seen: frozenset[str]) -> list[str] | None:
    """The names of the columns a query returns (a UNION's are its first branch's), None when unknown."""
    while isinstance(query, (exp.Subquery, exp.SetOperation)):
        query = query.this
    if not isinstance(query, exp.Select):
        return None
    names: list[str] = []
    for projection in query.expressions:
        if isinstance(projection, exp.Star) or (isinstance(projection, exp.Column) and projection.is_star):
            star = projection if isinstance(projection, exp.Star) else projection.this
            if any(star.args.get(key) for key in ("except_", "replace", "rename")):
                return None
            # ``t.*`` counted as every source's columns: a superset, which only leaves more names alone.
            sources = _source_columns(query, known_columns, seen)
            if sources is None:
                return None
            names.extend(sorted(sources))
        elif projection.alias_or_name:
            names.append(projection.alias_or_name)
    return names


def _visible_ctes(node: exp.Expression) -> dict[str, exp.CTE]:
    """The CTEs a query can read by name: those of its WITH and its enclosing queries' (the innermost wins)."""
    ctes: dict[str, exp.CTE] = {}
    enclosing = []
    current: exp.Expression | None = node
    while current is not None:
        with_ = current.args.get("with_") if isinstance(current, exp.Query) else None
        if with_ is not None:
            enclosing.append(with_)
        current = current.parent
    for with_ in reversed(enclosing):
        for cte in with_.expressions:
            ctes[cte.alias.lower()] = cte
    return ctes


def with_window_aliases_over_models(
    models: Mapping[str, Model], externals: Mapping[str, ExternalModel]
) -> dict[str, Model]:
    """``models`` (parents before children) with the lateral aliases in windows of SELECTs that read other models or
    external tables written out, now that their columns are known. A query is written again only where a reference
    was replaced (the columns it returns keep their names: its children's are unchanged)."""
    from dagster_sparkmesh.project.column_schema import KnownColumns as Known, rewritten_parents_first

    def written_out(model: Model, known: Known) -> Model:
        def known_columns(table: exp.Table) -> tuple[str, ...] | None:
            columns = known.columns.get(reference_name(table))
            return tuple(column for column, _ in columns) if columns else None

        query = _written_out_over(model.query, model.dialect, known_columns)
        return model if query is None else model.model_copy(update={"query": query})

    candidates = {name for name, model in models.items()
                  if (model.dialect or "").lower() in LATERAL_ALIAS_DIALECTS and _may_name_aliases_in_windows(model.query)}
    return rewritten_parents_first(models, externals, candidates, written_out)


def with_window_aliases_in_test_queries(
    tests: tuple[UnitTest, ...], models: Mapping[str, Model], externals: Mapping[str, ExternalModel]
) -> tuple[UnitTest, ...]:
    """Unit tests whose model was read again with the test's own variables (``model_query``), its lateral aliases
    in windows written out over the parents' columns as the model's own query's are."""
    known_columns = _parents_columns(models, externals)
    resolved = []
    for test in tests:
        model = models.get(test.model)
        query = _written_out_over(test.model_query, model.dialect, known_columns) if model is not None else None
        resolved.append(test if query is None else test.model_copy(update={"model_query": query}))
    return tuple(resolved)


def _parents_columns(models: Mapping[str, Model], externals: Mapping[str, ExternalModel]) -> KnownColumns:
    from dagster_sparkmesh.project.column_schema import ModelColumns  # it imports the loader's modules

    columns = ModelColumns(models, externals, final=True)  # derives a model's columns only when asked

    def known_columns(table: exp.Table) -> tuple[str, ...] | None:
        types = columns.types(reference_name(table))
        return tuple(types) if types else None

    return known_columns


def _written_out_over(query: str | None, dialect: str | None, known_columns: KnownColumns) -> str | None:
    """The query (Spark SQL) with its window aliases written out, or None when nothing was replaced."""
    from dagster_sparkmesh.project.sql.model import canonical_sql  # it imports this module

    if (dialect or "").lower() not in LATERAL_ALIAS_DIALECTS or not _may_name_aliases_in_windows(query):
        return None
    try:
        tree = sqlglot.parse_one(query or "", dialect="spark")
    except SqlglotError:
        return None
    before = canonical_sql(tree.copy())
    after = canonical_sql(with_window_aliases_written_out(tree, dialect or "", known_columns))
    return after if after != before else None


_ALIAS = re.compile(r" AS (`[^`]+`|\w+)", re.IGNORECASE)


def _may_name_aliases_in_windows(query: str | None) -> bool:
    """A cheap look at the text, as every load looks at every model: only a query with a window and a name after
    an ``AS`` that appears again can reference an alias in a window."""
    if not query or " OVER " not in query.upper():
        return False
    return any(len(re.findall(rf"(?<![\w`]){re.escape(name)}(?![\w`])", query, re.IGNORECASE)) > 1
               for name in set(_ALIAS.findall(query)))
