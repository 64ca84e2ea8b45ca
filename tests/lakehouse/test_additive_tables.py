"""Kinds that add to their table, on lakehouse tables: INCREMENTAL_BY_PARTITION replaces exactly the partitions its
rows hold, INCREMENTAL_UNMANAGED appends (or, with ``insert_overwrite``, replaces the partitions its rows hold),
each run one commit of the format, read the same by Spark's views and by PyIceberg or delta-rs."""

from __future__ import annotations

from datetime import datetime

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.naming import physical_table
from tests.lakehouse.conftest import format_project
from tests.lakehouse.outside_spark import commits, provider, rows_outside_spark, spark_rows, table_location

pytestmark = pytest.mark.lakehouse

SALES = "lh_src.sales"
START, DAY_2, DAY_3 = datetime(2024, 1, 1), datetime(2024, 1, 2), datetime(2024, 1, 3)
MODELS = {
    "by_region.sql": "MODEL (name lha.by_region, kind INCREMENTAL_BY_PARTITION, partitioned_by region);\n"
    f"SELECT region, COUNT(*) AS sales, SUM(amount) AS amount FROM {SALES} "
    "WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY region",
    "sales_log.sql": "MODEL (name lha.sales_log, kind INCREMENTAL_UNMANAGED);\n"
    f"SELECT id, region, ds, amount FROM {SALES} WHERE ds BETWEEN @start_ds AND @end_ds",
    "last_day.sql": "MODEL (name lha.last_day, kind INCREMENTAL_UNMANAGED (insert_overwrite true), "
    "partitioned_by region);\n"
    f"SELECT region, MAX(ds) AS ds, COUNT(*) AS sales FROM {SALES} WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY region",
}


@pytest.fixture
def additive_project(tmp_path, table_format, clean_catalog, spark):
    """Day 1: four sales in north and south; day 2: two sales in north only."""
    source = (
        SALES,
        "SELECT * FROM VALUES (1, 'north', DATE '2024-01-01', 10), (2, 'north', DATE '2024-01-01', 20), "
        "(3, 'south', DATE '2024-01-01', 30), (4, 'south', DATE '2024-01-01', 40), "
        "(5, 'north', DATE '2024-01-02', 50), (6, 'north', DATE '2024-01-02', 60) AS sales(id, region, ds, amount)",
        "id: int, region: string, ds: date, amount: int",
    )
    return format_project(spark, tmp_path / "additive", table_format, source, MODELS)


def _run(make_context, project, end: datetime):
    ctx = make_context(project, clock=end)
    plan = plan_for(ctx, START, end)
    apply_plan(ctx, plan)
    return plan


def _last_operation(spark, table_format: str, table: str) -> str:
    if table_format == "iceberg":
        return spark.sql(f"SELECT operation FROM spark_catalog.{table}.snapshots ORDER BY committed_at DESC LIMIT 1").collect()[0][0]
    row = spark.sql(f"DESCRIBE HISTORY {table} LIMIT 1").collect()[0]
    return f"{row['operation']} {row['operationParameters']['mode']}"


def test_each_run_adds_to_the_table_in_one_commit_of_the_format(spark, additive_project, make_context, table_format):
    first = _run(make_context, additive_project, DAY_2)
    tables = {name: physical_table(f"lha.{name}", first.version_of(f"lha.{name}")) for name in ("by_region", "sales_log", "last_day")}
    before = {name: commits(spark, table_format, f"spark_catalog.{table}") for name, table in tables.items()}
    assert {name: provider(spark, table) for name, table in tables.items()} == dict.fromkeys(tables, table_format)

    _run(make_context, additive_project, DAY_3)

    assert {name: commits(spark, table_format, f"spark_catalog.{table}") - before[name] for name, table in tables.items()} == {
        "by_region": 1, "sales_log": 1, "last_day": 1,
    }
    replaced, appended = ("overwrite", "append") if table_format == "iceberg" else ("WRITE Overwrite", "WRITE Append")
    assert _last_operation(spark, table_format, tables["by_region"]) == replaced
    assert _last_operation(spark, table_format, tables["sales_log"]) == appended
    assert _last_operation(spark, table_format, tables["last_day"]) == replaced
    # north's partition holds day 2 now; south's kept day 1's rows.
    assert spark_rows(spark, "lha.by_region") == [("north", 2, 110), ("south", 2, 70)]
    assert spark_rows(spark, "lha.last_day") == [("north", datetime(2024, 1, 2).date(), 2), ("south", datetime(2024, 1, 1).date(), 2)]
    assert [row[0] for row in spark_rows(spark, "lha.sales_log")] == [1, 2, 3, 4, 5, 6]
    for name, table in tables.items():
        assert rows_outside_spark(table_format, table_location(spark, table)) == spark_rows(spark, f"lha.{name}"), name
