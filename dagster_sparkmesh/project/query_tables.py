"""Table references in a parsed query, renamed: which model or table a reference names, the reference pointed at
another table with everything else kept, and columns qualified by a schema that is gone after the renaming."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sqlglot import exp

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.csv_types import CsvDialect, first_row, is_header, sniffed_columns
from dagster_sparkmesh.project.sql.file_readers import FILE_READ, TYPES_OPTION
from dagster_sparkmesh.project.sql.references import is_file_table, names_a_cte, names_a_schema, reference_name


def qualified_reference(table: exp.Table) -> str | None:
    """``[catalog.]schema.table`` of a reference (``spark_catalog`` dropped, a bare name in ``default``), or None
    for a CTE in scope, which is never a model.

    A name that is neither a model nor an external model is left as written; a file read
    (``parquet.`/x/t.parquet```) names no table, and renaming it would split its path at the dots."""
    if not isinstance(table.this, exp.Identifier) or is_file_table(table):
        return None
    if names_a_cte(table) or names_a_schema(table):
        return None
    return reference_name(table)


def renamed(table: exp.Table, qualified_name: str, alias: exp.Expression | None) -> exp.Table:
    """``table`` with its name parts replaced and every other arg kept: pivots, samples, time travel, hints and
    the like are part of what the query means (rendering replaces names, nothing else)."""
    copy = table.copy()
    physical = quoted_table(qualified_name)
    for part in ("this", "db", "catalog"):
        copy.set(part, physical.args.get(part))
    copy.set("alias", alias)
    return copy


def quoted_table(qualified_name: str) -> exp.Table:
    table = exp.to_table(qualified_name, dialect="spark")
    for identifier in table.find_all(exp.Identifier):
        identifier.set("quoted", True)
    return table


_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def anchor_file_read(table: exp.Table, root: Path | None) -> None:
    """A file read by a relative path (``parquet.`data/t.parquet```) made absolute against the project folder:
    DuckDB, and a local Spark session, read it from where ``sqlmesh`` runs, the project folder; a Spark server
    would read it from its own working directory. Anchored when rendered, so the stored query (and the fingerprint)
    keeps the path as written. Absolute paths and URLs (``s3://``, ``file:``) are left alone."""
    if root is not None and is_file_table(table):
        table.set("this", exp.to_identifier(_anchored(table.name, root), quoted=True))


def _anchored(path: str, root: Path | None) -> str:
    if root is None or not path or path.startswith("/") or _URL_SCHEME.match(path):
        return path
    return str(root / path)


def spark_file_read(table: exp.Table, root: Path | None) -> exp.Expression | None:
    """Spark's file read with options (``csv.`/p/f.csv` WITH ('header' = 'true')``) for a ``SPARKMESH_FILE(...)``
    call (``sql.file_readers``), else None. sqlglot neither parses nor writes such options, so the read is text
    (a ``Var``) that the generator writes as it is; its values are written as Spark string literals. A CSV read
    typed as DuckDB types it is a subquery casting each column read as text (``project.csv_types``)."""
    call = table.this
    if not isinstance(call, exp.Anonymous) or not isinstance(call.this, str) or call.this.upper() != FILE_READ:
        return None
    file_format, path, *pairs = (argument.name for argument in call.expressions)
    options, path = dict(zip(pairs[::2], pairs[1::2])), _anchored(path, root)
    columns, types = None, options.pop(TYPES_OPTION, None)
    dialect = CsvDialect(options.get("sep", ","), options.get("quote", '"'), options.get("nullValue", ""))
    if types == "duckdb":
        columns = sniffed_columns(Path(path), dialect)
        options["inferSchema"] = "false" if columns else "true"  # a file not readable here: Spark's inference
    elif types is not None:
        columns = _declared_read(Path(path), dialect, [tuple(pair) for pair in json.loads(types)], options)
    written = ", ".join(f"{_string(key)} = {_string(value)}" for key, value in options.items())
    quoted_path = path.replace("`", "``")
    read = exp.Table(this=exp.Var(this=f"{file_format}.`{quoted_path}`" + (f" WITH ({written})" if written else "")))
    if columns:
        projections = [_typed(column[0], column[-1], column[1] if len(column) == 3 else None) for column in columns]
        return exp.Subquery(this=exp.select(*projections).from_(read), alias=table.args.get("alias"))
    read.set("alias", table.args.get("alias"))
    return read


def _declared_read(
    path: Path, dialect: CsvDialect, declared: list[tuple[str, str]], options: dict[str, str]
) -> list[tuple[str, str, str]]:
    """(column Spark reads, declared name, declared type) of a read whose ``columns = {...}`` names and types the
    columns by position; ``options``' header becomes true or false (``auto``: sniffed from the first row)."""
    row = first_row(path, dialect) if options["header"] != "false" else None
    if options["header"] == "auto":
        options["header"] = "true" if row is not None and is_header(row, declared) else "false"
    if options["header"] == "false":
        return [(f"_c{index}", name, type_) for index, (name, type_) in enumerate(declared)]
    if row is None:
        raise ProjectError(f"cannot read the header of {path}: READ_CSV with columns = {{...}} reads it where the "
                           "query is rendered", hint="check the path, or say header = false")
    return [(read.strip(), name, type_) for read, (name, type_) in zip(row, declared)]


def _typed(name: str, type_: str, as_name: str | None = None) -> exp.Expression:
    column = exp.column(name, quoted=True)
    if type_ == "STRING" and as_name in (None, name):
        return column
    cast = column if type_ == "STRING" else exp.Cast(this=column, to=exp.DataType.build(type_, dialect="spark"))
    return exp.alias_(cast, as_name or name, quoted=True)


def _string(value: str) -> str:
    return exp.Literal.string(value).sql(dialect="spark")


def unqualify_columns(expression: exp.Expression, replaced: set[tuple[str, str]]) -> None:
    """``shop.orders.id`` must become ``orders.id``: the schema-qualified name no longer exists in the query."""
    if not replaced:
        return
    for column in expression.find_all(exp.Column):
        db = column.args.get("db")
        if db is not None and not column.args.get("catalog") and (db.name.lower(), column.table.lower()) in replaced:
            column.set("db", None)


_SPARK_KEYWORDS = frozenset("""
    ALL AND ANTI ANY AS ASC BETWEEN BOTH BY CASE CAST CHECK COLLATE COLUMN CONSTRAINT CREATE CROSS CURRENT DESC DISTINCT
    ELSE END ESCAPE EXCEPT FALSE FETCH FILTER FOR FOREIGN FROM FULL GRANT GROUP HAVING IN INNER INTERSECT INTERVAL INTO
    IS JOIN LATERAL LEADING LEFT LIKE LIMIT MINUS NATURAL NOT NULL OF OFFSET ON ONLY OR ORDER OUTER OVER PARTITION
    PRIMARY REFERENCES RIGHT SELECT SEMI SETMINUS SOME TABLE THEN TO TRAILING TRUE UNION UNIQUE USER USING VALUES WHEN
    WHERE WINDOW WITH
""".split())
"""Words Spark's parser takes for syntax where an alias stands (the join keywords even with reserved keywords not
enforced): a model may be named after one (``core.full``)."""


def alias_keeping(name: str) -> exp.TableAlias:
    """The alias that keeps a replaced table's name usable as a qualifier, quoted where Spark would read a keyword."""
    return exp.TableAlias(this=exp.to_identifier(name.lower(), quoted=name.upper() in _SPARK_KEYWORDS))
