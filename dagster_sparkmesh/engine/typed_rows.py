"""Rows of Python values → a typed Spark DataFrame (seeds, unit-test inputs).

Every value travels as text and is cast by Spark to the declared type: one conversion path for dates,
decimals, timestamps and booleans, in-process and over Spark Connect alike, and Spark's (ANSI) cast rules
decide what a valid value is. A list or a mapping (a unit test's input for an ARRAY, STRUCT or MAP column) travels
as JSON and is read with the column's type by ``FROM_JSON``: Spark casts no text to those types.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField, StructType


def as_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, default=_json_text)
    return str(value)


def _json_text(value: object) -> str:
    return as_text(value) or ""


def typed_frame(
    spark: SparkSession, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[object]]
) -> DataFrame:
    """A DataFrame with exactly ``columns`` (name, Spark type); an empty type means STRING."""
    names = [name for name, _ in columns]
    text_schema = StructType([StructField(name, StringType(), True) for name in names])
    text_rows = [tuple(as_text(value) for value in row) for row in rows]
    frame = spark.createDataFrame(text_rows, schema=text_schema)
    # SQL expressions rather than pyspark.sql.functions: the same call works on a local and a Connect session.
    return frame.selectExpr(*[f"{_typed(_quoted(name), kind or 'string')} AS {_quoted(name)}" for name, kind in columns])


def _typed(column: str, kind: str) -> str:
    if kind.strip().upper().startswith(("ARRAY", "STRUCT", "MAP")):
        return f"FROM_JSON({column}, '{kind}')"
    return f"CAST({column} AS {kind})"


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
