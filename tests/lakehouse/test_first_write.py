"""A lakehouse table's first write creates it with its rows in one commit (``engine.lakehouse_tables``): its columns
take NULLs later even where the first rows had none, and a table that is there already is left as it was."""

from __future__ import annotations

import pytest

from dagster_sparkmesh.engine.lakehouse_tables import (
    EXISTED, Partitioning, create_table_as, overwrite_where, rows_of_last_commit,
)

pytestmark = [pytest.mark.lakehouse]

TABLE = "lh_first.orders"


def _rows(spark) -> list[tuple]:
    return [(row.id, str(row.ds)) for row in spark.sql(f"SELECT id, ds FROM {TABLE} ORDER BY ds").collect()]


def test_a_table_created_with_its_first_rows_takes_nulls_later(spark, clean_catalog, table_format):
    spark.sql("CREATE DATABASE IF NOT EXISTS lh_first")
    first = "SELECT 1 AS id, DATE '2024-01-01' AS ds"  # a literal: a column Spark knows holds no NULL
    written = create_table_as(spark, TABLE, first, table_format, Partitioning(columns=("ds",)))
    # Delta runs a created table's write as a query of its own, whose metrics the observation does not get: the
    # writer reads them from the table's log then (``execution.writes.lakehouse_table``).
    assert written == (1 if table_format == "iceberg" else None)
    if table_format == "delta":
        assert rows_of_last_commit(spark, TABLE) == 1
    assert spark.sql(f"DESCRIBE TABLE EXTENDED {TABLE}").where("col_name = 'Provider'").collect()[0][1] == table_format
    later = "SELECT CAST(NULL AS INT) AS id, DATE '2024-01-02' AS ds"
    assert overwrite_where(spark, TABLE, later, "ds = DATE '2024-01-02'") == 1
    assert _rows(spark) == [(1, "2024-01-01"), (None, "2024-01-02")]

    assert create_table_as(spark, TABLE, first, table_format, Partitioning(columns=("ds",))) is EXISTED
    assert _rows(spark) == [(1, "2024-01-01"), (None, "2024-01-02")]
