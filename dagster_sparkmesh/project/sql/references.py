"""The tables a model's query reads, as written (``TableReference``): resolution needs the whole project, so the
parsed file keeps names and lines only."""

from __future__ import annotations

from sqlglot import exp

from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import DEFAULT_CATALOG


class TableReference(Record):
    """A table named in a model's query or ``depends_on``, before it is resolved against the project."""

    name: str
    """``schema.table`` (or a bare ``table``), lower case."""
    line: int
    snippet: str = ""


def query_references(query: exp.Expression, body: str) -> list[TableReference]:
    """Tables the query reads: not CTE names, not ``@this_model``, qualified as written."""
    cte_names = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    lines = body.splitlines()
    references = []
    for table in query.find_all(exp.Table):
        # Hints name tables by their alias in the query (``/*+ BROADCAST(t) */``): not a read of its own.
        if not isinstance(table.this, exp.Identifier) or table.find_ancestor(exp.Hint) is not None:
            continue
        name = table.name.lower()
        if not table.db and name in cte_names:
            continue
        if is_file_table(table):
            continue
        line = table.this.meta.get("line") or 0
        snippet = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        references.append(TableReference(name=reference_name(table), line=line, snippet=snippet))
    return references + _macro_relations(query, lines)


_FILE_FORMATS = frozenset({"parquet", "delta", "csv", "json", "orc", "avro", "text", "binaryfile"})


def is_file_table(table: exp.Table) -> bool:
    """Spark's ``parquet.`/path/file.parquet```: files read directly, no table of the project or its externals.
    Its quoted path is one name part: it must never go through a dotted string (``t.parquet`` would split)."""
    return (
        not table.catalog
        and table.db.lower() in _FILE_FORMATS
        and table.this.quoted
        and ("/" in table.name or "." in table.name)
    )


_RELATION_MACROS = frozenset({"@STAR", "@UNION", "@DEDUPLICATE"})


def _macro_relations(query: exp.Expression, lines: list[str]) -> list[TableReference]:
    """Tables named as arguments of a relation macro that waits for schemas (``@UNION('all', db.a, db.b)``): the
    query will read them once rendered, so they are dependencies now."""
    references = []
    for call in query.find_all(exp.Anonymous):
        if not isinstance(call.this, str) or call.this.upper() not in _RELATION_MACROS:
            continue
        for arg in call.expressions:
            if isinstance(arg, exp.Column) and arg.table:
                line = arg.this.meta.get("line") or 0
                snippet = lines[line - 1].strip() if 0 < line <= len(lines) else ""
                table = exp.to_table(".".join(part.name for part in arg.parts))  # column ``c.db.t``: table ``c.db.t``
                references.append(TableReference(name=reference_name(table), line=line, snippet=snippet))
    return references


def reference_name(table: exp.Table) -> str:
    """The lower-case name a table reference is resolved by: ``name``, ``schema.name`` or ``catalog.schema.name``;
    ``spark_catalog`` is dropped, so ``spark_catalog.db.t`` and ``db.t`` name the same model or external table."""
    parts = [part.name.lower() for part in table.parts]
    if len(parts) == 3 and parts[0] == DEFAULT_CATALOG:
        parts = parts[1:]
    return ".".join(parts)


def unique_references(references: list[TableReference]) -> tuple[TableReference, ...]:
    seen: dict[str, TableReference] = {}
    for reference in references:
        seen.setdefault(reference.name, reference)
    return tuple(seen.values())
