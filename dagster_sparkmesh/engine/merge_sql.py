"""The SQL of a merge by key with SQLMesh's ``when_matched`` and ``merge_filter`` (``model.merge_clauses``): the ON of
``MERGE INTO``, and for a plain table, which has no MERGE in Spark, the table's content after it as one query: the
table's unmatched rows, the new unmatched rows, and each matched pair through the first clause whose condition
holds (unchanged when none does, gone for ``DELETE``), as MERGE applies them."""

from __future__ import annotations

from collections.abc import Sequence

from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.model.merge_clauses import SOURCE, TARGET, MatchedClause, clauses_of
from dagster_sparkmesh.snapshot.naming import quote_identifier


def key_match(unique_key: Sequence[str], merge_filter: str | None) -> str:
    """The MERGE's ON: each key column null-safe (as every layout's upsert), and the filter."""
    keys = " AND ".join(f"{TARGET}.{quote_identifier(k)} <=> {SOURCE}.{quote_identifier(k)}" for k in unique_key)
    return f"{keys} AND ({merge_filter})" if merge_filter else keys


def merged_select(table_sql: str, source_sql: str, columns: Sequence[str], on: str, when_matched: str | None) -> str:
    """The table's content after the merge, as one query (``table_sql`` and ``source_sql``: names or subqueries)."""
    target_only = f"SELECT {TARGET}.* FROM {table_sql} AS {TARGET} LEFT ANTI JOIN {source_sql} AS {SOURCE} ON {on}"
    source_only = f"SELECT {SOURCE}.* FROM {source_sql} AS {SOURCE} LEFT ANTI JOIN {table_sql} AS {TARGET} ON {on}"
    clauses = clauses_of(when_matched) if when_matched else (MatchedClause(update_all=True),)
    _refuse_unknown_columns(clauses, columns)
    values = ", ".join(f"{_matched_value(column, clauses)} AS {quote_identifier(column)}" for column in columns)
    matched = f"SELECT {values} FROM {table_sql} AS {TARGET} JOIN {source_sql} AS {SOURCE} ON {on}"
    if any(clause.updates is None for clause in _up_to_first_unconditional(clauses)):
        matched += f" WHERE NOT {_first_applies(clauses)}"
    names = ", ".join(quote_identifier(column) for column in columns)
    return f"SELECT {names} FROM ({target_only}) UNION ALL SELECT {names} FROM ({source_only}) UNION ALL {matched}"


def _refuse_unknown_columns(clauses: Sequence[MatchedClause], columns: Sequence[str]) -> None:
    """A column the table does not have: MERGE INTO refuses the statement; a query would leave the row as it was."""
    known = {column.lower() for column in columns}
    for clause in clauses:
        for column, _ in clause.updates or ():
            if column not in known:
                raise EngineError(
                    f"when_matched sets target.{column}, a column the table does not have",
                    refusal=True, hint=f"set one of its columns: {', '.join(columns)}",
                )


def _matched_value(column: str, clauses: Sequence[MatchedClause]) -> str:
    """The column of a matched pair: the first applying clause's value, else the table's."""
    kept = f"{TARGET}.{quote_identifier(column)}"
    branches = []
    for clause in _up_to_first_unconditional(clauses):
        branches.append(f"WHEN {clause.condition or 'TRUE'} THEN {_value(clause, column, kept)}")
    return f"CASE {' '.join(branches)} ELSE {kept} END" if branches else kept


def _value(clause: MatchedClause, column: str, kept: str) -> str:
    if clause.updates is None:
        return kept  # (the row is removed by the WHERE)
    if clause.update_all:
        return f"{SOURCE}.{quote_identifier(column)}"
    return dict(clause.updates).get(column.lower(), kept)


def _first_applies(clauses: Sequence[MatchedClause]) -> str:
    """Whether the first clause that applies to a pair is a DELETE."""
    branches = [f"WHEN {c.condition or 'TRUE'} THEN {'TRUE' if c.updates is None else 'FALSE'}"
                for c in _up_to_first_unconditional(clauses)]
    return f"(CASE {' '.join(branches)} ELSE FALSE END)"


def _up_to_first_unconditional(clauses: Sequence[MatchedClause]) -> list[MatchedClause]:
    """Clauses after one without a condition never apply."""
    kept = []
    for clause in clauses:
        kept.append(clause)
        if clause.condition is None:
            break
    return kept
