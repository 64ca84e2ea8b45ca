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
from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.snapshot.records import Interval


def key_census(catalog: SparkCatalog, query_sql: str, unique_key: Sequence[str]) -> tuple[int, tuple[tuple, int] | None]:
    """The query's rows, and one key it returns more than once with that key's row count (None when every key is
    unique), in one job: a MERGE INTO reports no row count of its own."""
    keys = column_list(unique_key)
    rows = catalog.query_rows(
        f"SELECT COALESCE(SUM(n), 0), MAX(n), MAX_BY(STRUCT({keys}), n) "
        f"FROM (SELECT {keys}, COUNT(*) AS n FROM ({query_sql}) AS source GROUP BY {keys}) AS keyed"
    )
    total, most, key = rows[0]
    if most is None or most < 2:
        return int(total), None
    return int(total), (tuple(key), int(most))


def refuse_repeated_keys(catalog: SparkCatalog, model: Model, query_sql: str, batch: Interval) -> int:
    """Raise, naming one repeated key of the batch ``[start, end)``, when the query returns a key twice; else
    return the query's rows."""
    key = list(model.kind.unique_key)
    rows, repeated = key_census(catalog, query_sql, key)
    if repeated is None:
        return rows
    values, count = repeated
    described = ", ".join(f"{name} = {value!r}" for name, value in zip(key, values))
    raise ExecutionError(
        f"{model.name}: the query returns {count} rows for the unique key {described} "
        f"in [{batch.start:%Y-%m-%d %H:%M}, {batch.end:%Y-%m-%d %H:%M})",
        path=model.path,
        line=model.line,
        hint="an INCREMENTAL_BY_UNIQUE_KEY query must return each key once per run: aggregate by the key, keep one "
        "row per key (QUALIFY ROW_NUMBER() OVER (PARTITION BY the key ORDER BY ...) = 1), or add the columns that "
        "make rows unique to unique_key",
    )
