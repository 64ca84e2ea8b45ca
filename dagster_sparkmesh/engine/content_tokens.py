"""Content tokens: a text that identifies a physical table's rows, so that a reader can tell they did not change.

Period and generation tables hold their rows in immutable segments or generations, and their physical view names
the ones that are current (``engine.period_tables``, ``engine.generation_tables``): every write that changes the
rows writes new ones and switches the view. So the view's text identifies the content exactly, and reading it
costs one metastore look-up. Any other table (a plain table overwritten in place, a period table of the first
layout, whose view names no segments) has no token: nobody can tell whether its rows changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagster_sparkmesh.engine.generation_tables import names_generation
from dagster_sparkmesh.engine.period_segments import current_values

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine


def content_token(engine: SparkEngine, table: str) -> str | None:
    """The token of a period or generation table's rows; None when the table has none (or does not exist)."""
    text = engine.catalog.view_text(table)
    if text is None:
        return None
    return text if current_values(text) is not None or names_generation(text) else None
