"""Read a lakehouse table without Spark: PyIceberg for Iceberg, delta-rs (``deltalake``) for Delta, from the files
its catalog entry points at. What another engine of a team would read."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path


def table_location(spark, table: str) -> Path:
    rows = {row[0]: row[1] for row in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()}
    return Path(str(rows["Location"]).removeprefix("file:"))


def provider(spark, table: str) -> str:
    rows = {row[0]: row[1] for row in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()}
    return str(rows.get("Provider", "")).lower()


def rows_outside_spark(table_format: str, location: Path) -> list[tuple]:
    """The table's rows, sorted, as plain Python values (timestamps naive UTC, as Spark's session shows them)."""
    if table_format == "iceberg":
        from pyiceberg.table import StaticTable

        arrow = StaticTable.from_metadata(str(latest_iceberg_metadata(location))).scan().to_arrow()
    else:
        import pyarrow
        from deltalake import DeltaTable, QueryBuilder

        # delta-rs's query engine: ``DeltaTable.to_pyarrow_table`` (1.6) reads the columns of a table with column
        # mapping (``delta.columnMapping.mode``) as NULLs.
        result = QueryBuilder().register("model", DeltaTable(str(location))).execute("SELECT * FROM model")
        arrow = pyarrow.table(result.read_all())
    return sorted(tuple(_plain(value) for value in row.values()) for row in arrow.to_pylist())


def latest_iceberg_metadata(location: Path) -> Path:
    """The newest ``NNNNN-<uuid>[.gz].metadata.json`` of an Iceberg table: its current state."""
    numbered = [(int(re.match(r"(\d+)-", path.name).group(1)), path) for path in (location / "metadata").glob("*.metadata.json")]
    return max(numbered)[1]


def commits(spark, table_format: str, table: str) -> int:
    """How many commits the table's history holds (Iceberg snapshots, Delta versions)."""
    if table_format == "iceberg":
        return spark.sql(f"SELECT COUNT(*) FROM {table}.snapshots").collect()[0][0]
    return len(spark.sql(f"DESCRIBE HISTORY {table}").collect())


def spark_rows(spark, relation: str, columns: str = "*") -> list[tuple]:
    return sorted(tuple(_plain(value) for value in row) for row in spark.sql(f"SELECT {columns} FROM {relation}").collect())


def _plain(value: object) -> object:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(timezone.utc).replace(tzinfo=None)
    return value
