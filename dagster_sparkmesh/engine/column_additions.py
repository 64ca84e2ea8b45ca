"""Column additions: a forward-only change that adds output columns widens its table in place, as SQLMesh alters
the table of a forward-only model; the rows written before keep NULL in the new columns.

A plain table gets ``ALTER TABLE ADD COLUMNS``. A period table (``engine.period_tables``) gets it on its data table
(the new columns go before the hidden period column), and its physical view is switched to the wider column list
over the very segments it named: the rows stay as they are, and readers of the view see the new columns at once.
Views over the physical table are created with schema evolution (``SparkCatalog.create_or_alter_view``), so the
environments' views and the VIEW models reading it follow without being recreated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dagster_sparkmesh.engine.partition_sql import column_list
from dagster_sparkmesh.engine.period_segments import current_values, parse_segment, view_sql
from dagster_sparkmesh.snapshot.naming import period_data_table, quote, quote_identifier

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine


def missing_columns(
    engine: SparkEngine, table: str, wanted: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The (name, type) pairs of ``wanted`` the physical table has no column for (names compare case-blind)."""
    present = {name.lower() for name, _ in engine.columns(table)}
    return [(name, data_type) for name, data_type in wanted if name.lower() not in present]


def add_columns(engine: SparkEngine, table: str, added: Sequence[tuple[str, str]]) -> None:
    """Widen ``table`` (a plain table or a period table's physical view) by ``added`` (name, Spark type)."""
    definitions = ", ".join(f"{quote_identifier(name)} {data_type}" for name, data_type in added)
    layout = engine.period_layout(table)
    if layout is None:
        engine.execute(f"ALTER TABLE {quote(table)} ADD COLUMNS ({definitions})")
        return
    data = period_data_table(table)
    engine.execute(f"ALTER TABLE {quote(data)} ADD COLUMNS ({definitions})")
    engine.forget_layout(table)
    wider = engine.period_layout(table)
    assert wider is not None  # the data table is still partitioned by its period
    named = current_values(engine.view_text(table) or "")
    if named is None:  # the first layout's view: every partition of the data table is current
        switched = f"SELECT {column_list(wider.names)} FROM {quote(data)}"
    else:
        segments = [parse_segment(value, wider.period) for value in named]
        switched = view_sql(data, column_list(wider.names), wider.period_column, segments)
    engine.execute(f"ALTER VIEW {quote(table)} AS {switched}")
