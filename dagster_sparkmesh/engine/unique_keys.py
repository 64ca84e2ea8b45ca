"""The unique-key check of INCREMENTAL_BY_UNIQUE_KEY writes: a batch whose query returns a key more than once.

Which of two rows with one key a table keeps would depend on how the intervals were batched: one batch keeps both
(nothing merges them), two batches keep the later one. SQLMesh on Spark merges with ``MERGE INTO``, which refuses
a source with several rows for a key it matches and inserts them all for a key it does not: batch-dependent as
well. A repeated key is refused here whatever the batching, before anything is written, naming one such key.
"""

from __future__ import annotations

from collections.abc import Sequence

from dagster_sparkmesh.engine.catalog import SparkCatalog
from dagster_sparkmesh.engine.partition_sql import column_list


def first_repeated_key(engine: SparkCatalog, query_sql: str, unique_key: Sequence[str]) -> tuple[tuple, int] | None:
    """One key the query returns more than once, with its row count; None when every key is unique."""
    keys = column_list(unique_key)
    rows = engine.query_rows(
        f"SELECT {keys}, COUNT(*) FROM ({query_sql}) AS source GROUP BY {keys} HAVING COUNT(*) > 1 LIMIT 1"
    )
    if not rows:
        return None
    *key, count = rows[0]
    return tuple(key), int(count)
