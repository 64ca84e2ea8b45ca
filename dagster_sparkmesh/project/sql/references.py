"""The tables a model's query reads, as written (``TableReference``): resolution needs the whole project, so the
parsed file keeps names and lines only."""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import DEFAULT_CATALOG, DEFAULT_SCHEMA


class TableReference(Record):
    """A table named in a model's query or ``depends_on``, before it is resolved against the project."""

    name: str
    """``schema.table`` (a bare ``table`` is ``default.table``), lower case."""
    line: int
    snippet: str = ""


def query_references(query: exp.Expression, body: str) -> list[TableReference]:
    """Tables the query reads: not CTEs, not ``@this_model``, qualified as written (a bare name in ``default``)."""
    lines = body.splitlines()
    references = []
    for table in query.find_all(exp.Table):
        # Hints name tables by their alias in the query (``/*+ BROADCAST(t) */``): not a read of its own.
        if not isinstance(table.this, exp.Identifier) or table.find_ancestor(exp.Hint) is not None:
            continue
        if names_a_cte(table) or names_a_schema(table) or is_file_table(table):
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
    """The lower-case name a table reference is resolved by: ``schema.name`` or ``catalog.schema.name``; a bare
    ``name`` is ``default.name`` (where SQLMesh puts a model named so, and the database an unqualified name reads in
    Spark); ``spark_catalog`` is dropped, so ``spark_catalog.db.t`` and ``db.t`` name the same model or table."""
    parts = [part.name.lower() for part in table.parts]
    if len(parts) == 1:
        parts = [DEFAULT_SCHEMA, *parts]
    if len(parts) == 3 and parts[0] == DEFAULT_CATALOG:
        parts = parts[1:]
    return ".".join(parts)


def names_a_schema(table: exp.Table) -> bool:
    """Whether the name is a schema's, not a table's: ``USE x``, ``CREATE SCHEMA x``, ``DROP DATABASE x``... in a
    model's statements (sqlglot parses it as a table)."""
    parent = table.parent
    if isinstance(parent, exp.Use):
        return True
    kind = str(parent.args.get("kind") or "").upper() if isinstance(parent, (exp.Create, exp.Drop, exp.Describe)) else ""
    return kind in {"SCHEMA", "DATABASE", "NAMESPACE"}


def names_a_cte(table: exp.Table) -> bool:
    """Whether a bare table name reads a CTE in scope rather than a table: a ``WITH`` of an enclosing query defines
    it, before the CTE the reference is in (or at it, in a ``WITH RECURSIVE``). Inside its own definition, a
    CTE's name is the table it shadows (``WITH orders AS (SELECT * FROM orders)`` reads the model ``orders``)."""
    if table.args.get("db") or not isinstance(table.this, exp.Identifier):
        return False
    name, child = table.name.lower(), table
    for node in _ancestors(table):
        if isinstance(node, exp.With) and isinstance(child, exp.CTE):
            # (by identity: ``list.index`` compares trees by value)
            position = next(i for i, cte in enumerate(node.expressions) if cte is child)
            position += 1 if node.args.get("recursive") else 0
            if name in _cte_names(node.expressions[:position]):
                return True
        elif isinstance(node, exp.Query) and child is not node.args.get("with_"):
            with_ = node.args.get("with_")
            if with_ is not None and name in _cte_names(with_.expressions):
                return True
        child = node
    return False


def _ancestors(node: exp.Expression) -> Iterator[exp.Expression]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _cte_names(ctes: list[exp.Expression]) -> set[str]:
    return {cte.alias_or_name.lower() for cte in ctes}


def unique_references(references: list[TableReference]) -> tuple[TableReference, ...]:
    seen: dict[str, TableReference] = {}
    for reference in references:
        seen.setdefault(reference.name, reference)
    return tuple(seen.values())
