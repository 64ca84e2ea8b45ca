"""Column lineage of a SQL model for Dagster's ``dagster/column_lineage``, traced with sqlglot.

Best effort: unqualified columns resolve only when the parents declare their columns (or the query reads one
table); a column whose source cannot be found is left out rather than guessed. Python and seed models have none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

import dagster as dg
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.lineage import lineage


def column_lineage(
    query: str | None,
    parent_columns: Mapping[str, tuple[tuple[str, str], ...]],
    key_for: Callable[[str], dg.AssetKey | None],
) -> dg.TableColumnLineage | None:
    """``parent_columns``: declared (column, type) pairs per parent; ``key_for``: parent name → its asset key."""
    if not query:
        return None
    schema = tuple(sorted((name, tuple(columns)) for name, columns in parent_columns.items() if columns))
    traced = _trace(query, schema)
    deps_by_column = {
        column: [dg.TableColumnDep(asset_key=key, column_name=source_column) for table, source_column in sources if (key := key_for(table))]
        for column, sources in traced
    }
    deps_by_column = {column: deps for column, deps in deps_by_column.items() if deps}
    return dg.TableColumnLineage(deps_by_column=deps_by_column) if deps_by_column else None


@lru_cache(maxsize=1024)
def _trace(
    query: str, schema: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """(output column, ((table, column), ...)) per output column; cached because queries repeat across runs."""
    nested: dict = {}
    for table, columns in schema:
        db, _, name = table.partition(".")
        nested.setdefault(db, {})[name] = dict(columns)
    try:
        expression = sqlglot.parse_one(query, dialect="spark")
        result = []
        for column in expression.named_selects:
            node = lineage(column, expression, nested or None, dialect="spark")
            result.append((column, tuple(sorted(_sources(node)))))
        return tuple(result)
    except SqlglotError:
        return ()


def _sources(node) -> set[tuple[str, str]]:
    found = set()
    for leaf in node.walk():
        source = leaf.source
        if leaf.downstream or not isinstance(source, exp.Table) or not source.db:
            continue
        found.add((f"{source.db}.{source.name}".lower(), leaf.name.split(".")[-1].lower()))
    return found
