"""``partitioned_by`` expressions (BigQuery's ``DATE(ts)``, Iceberg's ``bucket(4, id)``) on lakehouse tables: an
Iceberg table is partitioned by the transforms they mean, a Delta table by its columns only; the rows are the
query's either way, and a later interval replaces its own rows only."""

from __future__ import annotations

from datetime import datetime

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.naming import physical_table
from tests.lakehouse.conftest import format_project
from tests.lakehouse.outside_spark import spark_rows

pytestmark = [pytest.mark.lakehouse]

VISITS = "lh_src.visits"
MODELS = {
    "visits.sql": "MODEL (name lhp.visits, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), cron '@daily',\n"
    "  partitioned_by (region, bucket(4, id), DATE(ts)));\n"
    f"SELECT id, region, ts FROM {VISITS} WHERE ts BETWEEN @start_ts AND @end_ts",
    "latest.sql": "MODEL (name lhp.latest, kind FULL, partitioned_by (DATE(ts)));\n"
    f"SELECT MAX(ts) AS ts, COUNT(*) AS visits FROM {VISITS}",
}


def _partition_fields(spark, table: str, table_format: str) -> str:
    """The table's ``PARTITIONED BY (...)`` as Spark shows it (the format's own partition spec); Delta's columns as
    its log lists them (Delta has no SHOW CREATE TABLE)."""
    if table_format == "delta":
        return ", ".join(spark.sql(f"DESCRIBE DETAIL {table}").collect()[0].partitionColumns)
    text = spark.sql(f"SHOW CREATE TABLE {table}").collect()[0][0]
    line = next((line for line in text.splitlines() if line.startswith("PARTITIONED BY (")), "")
    return line.removeprefix("PARTITIONED BY (").removesuffix(")")


def test_expressions_partition_an_iceberg_table_and_leave_the_rows_alone(spark, tmp_path, table_format, clean_catalog,
                                                                          make_context):
    query = ("SELECT * FROM VALUES (1, 'north', TIMESTAMP '2024-01-01 10:00:00'), (2, 'south', TIMESTAMP "
             "'2024-01-01 23:00:00'), (3, 'north', TIMESTAMP '2024-01-02 01:00:00') AS v(id, region, ts)")
    project = format_project(spark, tmp_path / "p", table_format, (VISITS, query, "id: int, region: string, ts: timestamp"),
                             MODELS)
    ctx = make_context(project, clock=datetime(2024, 1, 3))
    plan = plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3))
    apply_plan(ctx, plan)

    assert spark_rows(spark, "lhp.visits") == [
        (1, "north", datetime(2024, 1, 1, 10)), (2, "south", datetime(2024, 1, 1, 23)), (3, "north", datetime(2024, 1, 2, 1)),
    ]
    assert spark_rows(spark, "lhp.latest") == [(datetime(2024, 1, 2, 1), 3)]
    visits = _partition_fields(spark, physical_table("lhp.visits", plan.version_of("lhp.visits")), table_format)
    latest = _partition_fields(spark, physical_table("lhp.latest", plan.version_of("lhp.latest")), table_format)
    if table_format == "iceberg":
        # DATE(ts) is the day of the time column, its first partition field already.
        assert (visits, latest) == ("days(ts), region, bucket(4, id)", "days(ts)")
    else:
        assert (visits, latest) == ("region", "")
