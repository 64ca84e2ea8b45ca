"""A model's rows reduced to a digest that two Spark builds can compare: row count and an order-independent checksum
per column and per row (the sum of ``xxhash64`` over every row), so two tables agree exactly when they hold the same
multiset of rows (up to hash collisions).

Both tools' sides compute it with this same module: sparkmesh's in its own environment, SQLMesh's in the referee's
virtualenv (where this file is imported by path). It uses the standard library only, and builds SQL text for
whichever Spark session the caller holds.

Values are hashed by their text (``CAST(... AS STRING)``), not by their binary form: ``xxhash64`` of 1 as INT and as
BIGINT differ, and the two tools may well pick different widths for the same values. Non-integer numbers are
rounded to ``DECIMALS`` places first: a SUM of doubles may differ in its last bits with the order Spark adds them,
which depends on partitioning, not on the tools. The types themselves are kept in the digest and compared apart.
"""

from __future__ import annotations

from dataclasses import dataclass

DECIMALS = 6
_INEXACT_PREFIXES = ("float", "double", "decimal")


@dataclass(frozen=True)
class Digest:
    columns: tuple[tuple[str, str], ...]
    """(column, Spark type) in the table's order, names lower-cased (Spark's names are case-insensitive)."""
    rows: int
    column_checksums: tuple[tuple[str, str], ...]
    """(column, checksum), sorted by column name."""
    row_checksum: str
    """The checksum of whole rows (every column, in name order): tells a column's values swapped between rows."""

    def to_json(self) -> dict:
        return {"columns": [list(c) for c in self.columns], "rows": self.rows,
                "column_checksums": [list(c) for c in self.column_checksums], "row_checksum": self.row_checksum}

    @classmethod
    def from_json(cls, data: dict) -> Digest:
        return cls(columns=tuple((n, t) for n, t in data["columns"]), rows=int(data["rows"]),
                   column_checksums=tuple((n, c) for n, c in data["column_checksums"]),
                   row_checksum=data["row_checksum"])


def quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def hashed_value(column: str, spark_type: str) -> str:
    """The text of one value, as hashed."""
    quoted = quote_identifier(column)
    if spark_type.lower().startswith(_INEXACT_PREFIXES):
        return f"CAST(ROUND(CAST({quoted} AS DOUBLE), {DECIMALS}) AS STRING)"
    return f"CAST({quoted} AS STRING)"


def digest_query(relation: str, columns: list[tuple[str, str]]) -> str:
    """One aggregate over ``relation`` (already quoted): COUNT(*), then a checksum per column in name order, then
    the row checksum. ``columns``: (name, Spark type) as the table declares them."""
    ordered = sorted(columns, key=lambda column: column[0].lower())
    values = [hashed_value(name, spark_type) for name, spark_type in ordered]
    hashes = [f"xxhash64({value})" for value in values]
    hashes.append("xxhash64(" + ", ".join(values) + ")" if values else "0")
    # DECIMAL: a sum of 64-bit hashes overflows BIGINT, which ANSI mode refuses.
    sums = ", ".join(f"CAST(COALESCE(SUM(CAST({h} AS DECIMAL(38, 0))), 0) AS STRING)" for h in hashes)
    return f"SELECT COUNT(*), {sums} FROM {relation}"


def digest_from_row(columns: list[tuple[str, str]], row: list) -> Digest:
    """The digest from ``digest_query``'s one result row."""
    names = sorted(name.lower() for name, _ in columns)
    checksums = [str(value) for value in row[1:]]
    return Digest(
        columns=tuple((name.lower(), spark_type) for name, spark_type in columns),
        rows=int(row[0]),
        column_checksums=tuple(zip(names, checksums[:-1])),
        row_checksum=checksums[-1],
    )


def digest_table(spark, relation: str) -> Digest:
    """The digest of ``relation`` (a table or view name, quoted as Spark reads it) in ``spark``'s catalog."""
    columns = [(field.name, field.dataType.simpleString()) for field in spark.table(relation).schema.fields]
    row = spark.sql(digest_query(relation, columns)).collect()[0]
    return digest_from_row(columns, list(row))
