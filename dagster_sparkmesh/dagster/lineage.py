"""Column lineage of a SQL model for Dagster's ``dagster/column_lineage``, traced with sqlglot, once per model
version on its asset spec (definition metadata), not copied onto every partition's materialization.

Best effort: unqualified columns resolve only when the parents' columns are known (declared or derived) or the
query reads one table; a column whose source cannot be found is left out rather than guessed. Python and seed
models have none. Tracing a 1,000-model project costs seconds, so traces are kept in the project's record cache
(``.sparkmesh/cache/column_lineage``), keyed by the query and its parents' columns.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import dagster as dg
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope

from dagster_sparkmesh.project.cache import RecordCache, cache_dir, cache_salt
from dagster_sparkmesh.records import Record

ParentColumns = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
"""(parent table, its (column, type) pairs) per parent whose columns are known, sorted."""


class TracedColumns(Record):
    """(output column, ((source table, source column), ...)) per output column of one query."""

    columns: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()


class LineageTracer:
    """Traces queries, through the project's record cache when one is given (``save()`` after the last trace)."""

    def __init__(self, project_path: Path | None) -> None:
        self.cache: RecordCache[TracedColumns] | None = None
        if project_path is not None and project_path.is_dir():  # a project built in memory has no cache
            salt = cache_salt(("lineage",), (sys.modules[__name__],))  # editing the tracer invalidates its traces
            self.cache = RecordCache(cache_dir(project_path, "column_lineage"), salt, TracedColumns)

    def column_lineage(
        self,
        query: str | None,
        parent_columns: Mapping[str, tuple[tuple[str, str], ...]],
        key_for: Callable[[str], dg.AssetKey | None],
    ) -> dg.TableColumnLineage | None:
        """``parent_columns``: (column, type) pairs per parent; ``key_for``: parent name → its asset key."""
        if not query:
            return None
        schema = tuple(sorted((name, tuple(columns)) for name, columns in parent_columns.items() if columns))
        deps_by_column = {
            column: [dg.TableColumnDep(asset_key=key, column_name=source) for table, source in sources if (key := key_for(table))]
            for column, sources in self._traced(query, schema)
        }
        deps_by_column = {column: deps for column, deps in deps_by_column.items() if deps}
        return dg.TableColumnLineage(deps_by_column=deps_by_column) if deps_by_column else None

    def save(self) -> None:
        if self.cache is not None:
            self.cache.save()

    def _traced(self, query: str, schema: ParentColumns) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
        if self.cache is None:
            return trace(query, schema)
        key = self.cache.key(Path("query"), repr((query, schema)).encode("utf-8"))
        cached = self.cache.get(key)
        if cached is not None:
            return cached.columns
        traced = trace(query, schema)
        self.cache.put(key, TracedColumns(columns=traced))
        return traced


def trace(query: str, schema: ParentColumns) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """Qualify the query once, then follow each output column through its scopes (CTEs, subqueries, unions) to
    the tables it reads. sqlglot's ``lineage`` builds the same answer with a node graph and copies of every scope,
    which cost three times as much on a 1,000-model project."""
    nested: dict = {}
    for table, columns in schema:
        db, _, name = table.rpartition(".")
        nested.setdefault(db, {})[name] = dict(columns)
    try:
        expression = sqlglot.parse_one(query, dialect="spark")
        qualified = qualify(expression, schema=nested or None, dialect="spark", validate_qualify_columns=False,
                            identify=False)
        root = build_scope(qualified)
    except (SqlglotError, KeyError, ValueError):
        return ()
    if root is None or not isinstance(qualified, exp.Query):
        return ()
    return tuple((column, tuple(sorted(_column_sources(root, column, 0)))) for column in qualified.named_selects)


_MAX_DEPTH = 64  # scopes nest this deep only in generated SQL; deeper columns are left out, not guessed


def _column_sources(scope: Scope, column: str, depth: int) -> set[tuple[str, str]]:
    if depth > _MAX_DEPTH:
        return set()
    if scope.is_set_operation:
        return set().union(*(_column_sources(branch, column, depth + 1) for branch in scope.set_operation_scopes))
    select = next((s for s in scope.expression.selects if s.alias_or_name == column), None)
    if select is None:
        return set()
    found: set[tuple[str, str]] = set()
    for reference in select.find_all(exp.Column):
        source = scope.sources.get(reference.table)
        if isinstance(source, exp.Table) and source.db:
            found.add((f"{source.db}.{source.name}".lower(), reference.name.lower()))
        elif isinstance(source, Scope):
            found |= _column_sources(source, reference.name, depth + 1)
    return found
