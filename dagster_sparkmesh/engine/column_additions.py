"""Forward-only column changes: a forward-only change that adds or drops output columns changes its table in
place (as SQLMesh alters the table of a forward-only model); rows written before keep NULL in added columns.

A plain table gets ``ALTER TABLE ADD COLUMNS``. A period table (``engine.period_tables``) gets it on its data
table (the new columns go before the hidden period column), and its physical view is switched to the new column
list over the very segments it named: the rows stay as they are, and readers of the view see the change at once.
Spark cannot drop a column of a Parquet table, so a period table *hides* a dropped column instead: the data
column is marked by its comment, the view stops showing it and writes leave it NULL; adding it back with the
same type shows it again. A plain table cannot hide one: dropping is refused there, with what to do instead.
Views over the physical table are created with schema evolution (``SparkCatalog.create_or_alter_view``), so the
environments' views and the VIEW models reading it follow without being recreated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp
from typing import TYPE_CHECKING

from dagster_sparkmesh.engine.partition_sql import column_list, string_literal
from dagster_sparkmesh.engine.period_segments import current_values, parse_segment, view_sql
from dagster_sparkmesh.engine.period_tables import HIDDEN_COLUMN_COMMENT, PeriodLayout
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.snapshot.naming import period_data_table, quote, quote_identifier

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine


# A value of the first type always fits the second unchanged: writing it into such a column loses nothing.
_LOSSLESS_INTO = {
    "tinyint": {"smallint", "int", "bigint", "double"}, "smallint": {"int", "bigint", "double"},
    "int": {"bigint", "double"}, "float": {"double"},
}


@dataclass(frozen=True)
class ColumnChanges:
    """How a query's output columns differ from its existing table's; names compare case-blind."""

    added: list[tuple[str, str]]
    """(name, type) of the query's columns the table lacks."""
    dropped: list[str]
    """The table's columns the query lacks."""
    retyped: list[tuple[str, str, str]]
    """(name, the table's type, the query's type) where the table's column cannot hold the query's values as they
    are (a narrower or another type: Spark would cast them on write, silently changing them)."""


def column_changes(
    engine: SparkEngine, table: str, wanted: Sequence[tuple[str, str]], typed: Sequence[tuple[str, str]] = ()
) -> ColumnChanges:
    """``wanted``: the model's columns (declared, else its query's); ``typed``: the types its rows will have (the
    query's schema where it is known: declared types are not casts), else ``wanted``'s."""
    present = engine.catalog.columns(table)
    have = {name.lower(): _normalized(data_type) for name, data_type in present}
    keep = {name.lower() for name, _ in wanted}
    added = [(name, data_type) for name, data_type in wanted if name.lower() not in have]
    dropped = [name for name, _ in present if name.lower() not in keep]
    retyped = [
        (name, have[name.lower()], _normalized(data_type))
        for name, data_type in (typed or wanted)
        if name.lower() in have and not _fits(_normalized(data_type), have[name.lower()])
    ]
    return ColumnChanges(added, dropped, retyped)


def _normalized(data_type: str) -> str:
    """One spelling per type: the catalog writes ``decimal(10,2)``, sqlglot ``DECIMAL(10, 2)``."""
    try:
        built = exp.DataType.build(data_type, dialect="spark")
    except Exception:  # noqa: BLE001 - a type sqlglot cannot read compares as written
        return data_type.lower()
    if built.this in (exp.DataType.Type.CHAR, exp.DataType.Type.VARCHAR):
        return "string"  # Spark stores CHAR(n) and VARCHAR(n) as strings; a query's text is a string
    return built.sql(dialect="spark").lower()


def _fits(query_type: str, table_type: str) -> bool:
    # A NULL literal's column (void) holds nothing to cast.
    return query_type in (table_type, "void", "null") or table_type in _LOSSLESS_INTO.get(query_type, ())


def add_columns(engine: SparkEngine, table: str, added: Sequence[tuple[str, str]]) -> None:
    """Widen ``table`` (a plain table or a period table's physical view) by ``added`` (name, Spark type)."""
    layout = engine.period_layout(table)
    if layout is None:
        engine.catalog.execute(f"ALTER TABLE {quote(table)} ADD COLUMNS ({_definitions(added)})")
        return
    data = period_data_table(table)
    hidden = {name.lower(): name for name in layout.hidden}
    fresh = [(name, data_type) for name, data_type in added if name.lower() not in hidden]
    if fresh:
        engine.catalog.execute(f"ALTER TABLE {quote(data)} ADD COLUMNS ({_definitions(fresh)})")
    for name, _ in added:
        if name.lower() in hidden:  # dropped before, back now: shown again (rows written meanwhile hold NULL)
            _comment(engine, data, hidden[name.lower()], "")
    _switch_view(engine, table)


DROP_REFUSED = "Spark cannot drop a column of a Parquet table (nor of a Delta table without column mapping)"
DROP_REFUSED_HINT = (
    "keep the columns in the query (e.g. CAST(NULL AS <type>) AS <name>), make a breaking change (not forward-only) "
    "that rebuilds the table, or, for a Delta table, create it with column mapping: physical_properties "
    "(delta.columnMapping.mode = 'name')"
)


def can_hide_columns(engine: SparkEngine, table: str, *, droppable: bool = False) -> bool:
    """Whether ``hide_columns`` can take columns away from ``table``: a table that drops them itself, or a period
    table, which hides them."""
    return droppable or engine.period_layout(table) is not None


def hide_columns(engine: SparkEngine, table: str, dropped: Sequence[str], *, droppable: bool = False) -> None:
    """Stop showing ``dropped`` columns of a period table; ``droppable``: a table that drops columns itself (an
    Iceberg table: a change of its metadata, its files untouched); refused for any other table."""
    if droppable:
        engine.catalog.execute(f"ALTER TABLE {quote(table)} DROP COLUMNS ({', '.join(map(quote_identifier, dropped))})")
        return
    if not can_hide_columns(engine, table):
        raise EngineError(f"cannot drop column(s) {', '.join(dropped)} of {table} in a forward-only change: {DROP_REFUSED}",
                          hint=DROP_REFUSED_HINT)
    data = period_data_table(table)
    for name in dropped:
        _comment(engine, data, name, HIDDEN_COLUMN_COMMENT)
    _switch_view(engine, table)


def _switch_view(engine: SparkEngine, table: str) -> None:
    """The physical view over the data table's shown columns now, naming the same segments as before."""
    engine.layouts.forget(table)
    layout = engine.period_layout(table)
    assert layout is not None  # the data table is still partitioned by its period
    engine.catalog.alter_view(table, _view_text(engine, table, layout))


def _view_text(engine: SparkEngine, table: str, layout: PeriodLayout) -> str:
    data = period_data_table(table)
    named = current_values(engine.catalog.view_text(table) or "")
    if named is None:  # the first layout's view: every partition of the data table is current
        return f"SELECT {column_list(layout.names)} FROM {quote(data)}"
    segments = [parse_segment(value, layout.period) for value in named]
    return view_sql(data, column_list(layout.names), layout.period_column, segments)


def _comment(engine: SparkEngine, data: str, column: str, comment: str) -> None:
    engine.catalog.execute(f"ALTER TABLE {quote(data)} ALTER COLUMN {quote_identifier(column)} COMMENT {string_literal(comment)}")


def _definitions(columns: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{quote_identifier(name)} {data_type}" for name, data_type in columns)
