"""A time-range model whose intervals are shorter than an hour, on a lakehouse table: a restated 15-minute interval
is replaced in one commit, the rest of its hour kept. On Iceberg its table is partitioned by hour, which an
overwrite by filter of 15 minutes cannot cover (Iceberg refuses to delete part of a file): the interval is replaced
by a merge that inserts its rows and deletes its old ones instead."""

from __future__ import annotations

from datetime import datetime

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.snapshot.records import Interval
from tests.lakehouse.conftest import format_project
from tests.lakehouse.outside_spark import commits, provider, rows_outside_spark, spark_rows, table_location

pytestmark = pytest.mark.lakehouse

READINGS = "lh_src.readings"
START, END = datetime(2024, 1, 1), datetime(2024, 1, 1, 2)


@pytest.fixture
def quarter_hour_project(tmp_path, table_format, clean_catalog, spark):
    """One reading a minute for two hours, read by a model with a 15-minute cron."""
    source = (
        READINGS,
        "SELECT TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, CAST(id AS INT), 0) AS ts, "
        "id AS reading FROM range(120)",
        "ts: timestamp, reading: bigint",
    )
    return format_project(spark, tmp_path / "quarter_hour", table_format, source, {
        "quarter.sql": "MODEL (name lhq.quarter, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), cron '*/15 * * * *');\n"
        f"SELECT ts, reading FROM {READINGS} WHERE ts BETWEEN @start_ts AND @end_ts",
    })


def test_a_restated_quarter_hour_is_replaced_in_one_commit_and_its_hour_kept(
    spark, quarter_hour_project, make_context, table_format
):
    ctx = make_context(quarter_hour_project, clock=END)
    plan = plan_for(ctx, START, END)
    apply_plan(ctx, plan)
    table = physical_table("lhq.quarter", plan.version_of("lhq.quarter"))
    assert provider(spark, table) == table_format
    before = commits(spark, table_format, f"spark_catalog.{table}")
    # Late corrections of 00:15-00:30 (and, outside the restated window, of 00:40).
    spark.sql(f"CREATE TABLE lh_src.corrected USING parquet AS SELECT ts, IF(minute(ts) BETWEEN 15 AND 29 "
              f"OR minute(ts) = 40, reading * 100, reading) AS reading FROM {READINGS}")
    spark.sql(f"INSERT OVERWRITE TABLE {READINGS} SELECT * FROM lh_src.corrected")

    restate = make_context(quarter_hour_project, clock=END)
    window = Interval(start=datetime(2024, 1, 1, 0, 15), end=datetime(2024, 1, 1, 0, 30))
    apply_plan(restate, plan_for(restate, START, END, restate_models=("lhq.quarter",), restate_within=window))

    assert commits(spark, table_format, f"spark_catalog.{table}") == before + 1
    readings = dict(spark_rows(spark, "lhq.quarter", "minute(ts) + 60 * hour(ts), reading"))
    assert len(readings) == 120
    assert [readings[minute] for minute in (14, 15, 29, 30, 40)] == [14, 1500, 2900, 30, 40]  # 00:40 not restated
    assert rows_outside_spark(table_format, table_location(spark, table)) == spark_rows(spark, "lhq.quarter")
