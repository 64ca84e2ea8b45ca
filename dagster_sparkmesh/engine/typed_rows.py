"""Rows of Python values → a typed Spark DataFrame (seeds, unit-test inputs).

Every value travels as text and is cast by Spark to the declared type: one conversion path for dates,
decimals, timestamps and booleans, in-process and over Spark Connect alike, and Spark's (ANSI) cast rules
decide what a valid value is.
"""

from __future__ import annotations

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
    return str(value)


def typed_frame(
    spark: SparkSession, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[object]]
) -> DataFrame:
    """A DataFrame with exactly ``columns`` (name, Spark type); an empty type means STRING."""
    names = [name for name, _ in columns]
    text_schema = StructType([StructField(name, StringType(), True) for name in names])
    text_rows = [tuple(as_text(value) for value in row) for row in rows]
    frame = spark.createDataFrame(text_rows, schema=text_schema)
    # SQL expressions rather than pyspark.sql.functions: the same call works on a local and a Connect session.
    return frame.selectExpr(*[f"CAST({_quoted(name)} AS {kind or 'string'}) AS {_quoted(name)}" for name, kind in columns])


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
