"""Column lineage of a SQL model for Dagster's ``dagster/column_lineage`` (``project.column_lineage`` traces it),
once per model version on its asset spec (definition metadata), not copied onto every partition's
materialization. Python and seed models have none.

A model whose columns were derived (``project.column_schema``) was traced in the same pass; the others (declared
columns) are traced here, through the project's record cache (``.sparkmesh/cache/column_lineage``, keyed by the
query and its parents' columns), since tracing a 1,000-model project costs seconds.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import dagster as dg

from dagster_sparkmesh.project.column_lineage import ColumnSources, trace_query
from dagster_sparkmesh.project.cache import RecordCache, cache_dir, cache_salt
from dagster_sparkmesh.records import Record

ParentColumns = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
"""(parent table, its (column, type) pairs) per parent whose columns are known, sorted."""


class TracedColumns(Record):
    """(output column, ((source table, source column), ...)) per output column of one query."""

    columns: ColumnSources = ()


class LineageTracer:
    """Traces queries, through the project's record cache when one is given (``save()`` after the last trace)."""

    def __init__(self, project_path: Path | None) -> None:
        self.cache: RecordCache[TracedColumns] | None = None
        if project_path is not None and project_path.is_dir():  # a project built in memory has no cache
            # Editing the tracer (here or in project.column_lineage) invalidates its traces.
            salt = cache_salt(("lineage",), (sys.modules[__name__], sys.modules[trace_query.__module__]))
            self.cache = RecordCache(cache_dir(project_path, "column_lineage"), salt, TracedColumns)

    def column_lineage(
        self,
        query: str | None,
        parent_columns: Mapping[str, tuple[tuple[str, str], ...]],
        key_for: Callable[[str], dg.AssetKey | None],
        traced: ColumnSources | None = None,
    ) -> dg.TableColumnLineage | None:
        """``parent_columns``: (column, type) pairs per parent; ``key_for``: parent name → its asset key;
        ``traced``: the query's sources when already known (traced while deriving its columns)."""
        if not query:
            return None
        if traced is None:
            schema = tuple(sorted((name, tuple(columns)) for name, columns in parent_columns.items() if columns))
            traced = self._traced(query, schema)
        deps_by_column = {
            column: [dg.TableColumnDep(asset_key=key, column_name=source) for table, source in sources if (key := key_for(table))]
            for column, sources in traced
        }
        deps_by_column = {column: deps for column, deps in deps_by_column.items() if deps}
        return dg.TableColumnLineage(deps_by_column=deps_by_column) if deps_by_column else None

    def save(self) -> None:
        if self.cache is not None:
            self.cache.save()

    def _traced(self, query: str, schema: ParentColumns) -> ColumnSources:
        if self.cache is None:
            return trace(query, schema)
        key = self.cache.key(Path("query"), repr((query, schema)).encode("utf-8"))
        cached = self.cache.get(key)
        if cached is not None:
            return cached.columns
        traced = trace(query, schema)
        self.cache.put(key, TracedColumns(columns=traced))
        return traced


def trace(query: str, schema: ParentColumns) -> ColumnSources:
    nested: dict = {}
    for table, columns in schema:
        db, _, name = table.rpartition(".")
        nested.setdefault(db, {})[name] = dict(columns)
    return trace_query(query, nested)
