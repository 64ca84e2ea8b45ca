"""PeriodLayouts: what one engine knows of its tables' period layouts (``engine.period_tables``), in one place.

Knowing a table's layout saves a catalog round trip on every write and audit that follows. The cache has one owner,
which both fills it (a layout found in the catalog, or remembered by the creation that just made the table) and
empties it (a table dropped, or its columns changed): the table creation (``engine.table_creation``) and the writers
(``engine.adapter``) are handed this object, so no part fills a cache that another part empties.
"""

from __future__ import annotations

from dataclasses import replace

from dagster_sparkmesh.engine.catalog import SparkCatalog
from dagster_sparkmesh.engine.period_tables import PeriodLayout, layout_from_catalog
from dagster_sparkmesh.snapshot.naming import period_data_table


class PeriodLayouts:
    """Physical table -> its period layout, as found or created by this engine; forgotten when the table is dropped
    or its columns change, so a table created again under the same name is looked up again."""

    def __init__(self, catalog: SparkCatalog) -> None:
        self._catalog = catalog
        self._layouts: dict[str, PeriodLayout] = {}

    def layout_of(self, table: str) -> PeriodLayout | None:
        """The layout of ``table`` if it is a period table (its data table is in the catalog), else None."""
        if table not in self._layouts:
            listed = self._catalog.catalog_columns_if_exists(period_data_table(table))
            if listed is None:
                return None
            layout = layout_from_catalog([(c.name, c.data_type, c.is_partition, c.comment) for c in listed])
            if layout is None:
                return None
            layout = replace(layout, pads_strings=any(c.padded for c in listed))
            self._layouts[table] = layout  # a version's table never changes its layout
        return self._layouts[table]

    def remember(self, table: str, layout: PeriodLayout) -> None:
        """A layout this engine just created the table with: the writes and audits that follow need not ask."""
        self._layouts[table] = layout

    def forget(self, table: str) -> None:
        """The table was dropped, or its columns were just changed: ask the catalog next time."""
        self._layouts.pop(table, None)
