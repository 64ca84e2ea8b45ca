"""A FULL model's lakehouse table is replaced whole by each run's rows, also when it is partitioned and the new rows
hold fewer partitions than the old ones (the session's dynamic partition overwrite, which the default layouts use,
must not turn the replacement into a per-partition one)."""

from __future__ import annotations

from datetime import datetime

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.naming import physical_table
from tests.lakehouse.conftest import format_project
from tests.lakehouse.outside_spark import rows_outside_spark, spark_rows, table_location

pytestmark = pytest.mark.lakehouse

STORES = "lh_src.stores"
START, DAY_2, DAY_3 = datetime(2024, 1, 1), datetime(2024, 1, 2), datetime(2024, 1, 3)
MODELS = {
    "by_region.sql": "MODEL (name lhf.by_region, kind FULL, partitioned_by region);\n"
    f"SELECT region, COUNT(*) AS stores FROM {STORES} GROUP BY region",
}


def test_a_partitioned_full_table_keeps_no_partition_its_new_rows_lack(
    spark, tmp_path, table_format, clean_catalog, make_context
):
    source = (STORES, "SELECT * FROM VALUES (1, 'north'), (2, 'south') AS stores(id, region)", "id: int, region: string")
    project = format_project(spark, tmp_path / "full", table_format, source, MODELS)
    ctx = make_context(project, clock=DAY_2)
    plan = plan_for(ctx, START, DAY_2)
    apply_plan(ctx, plan)
    assert spark_rows(spark, "lhf.by_region") == [("north", 1), ("south", 1)]

    spark.sql(f"INSERT OVERWRITE TABLE {STORES} SELECT 3 AS id, 'north' AS region")
    ctx = make_context(project, clock=DAY_3)
    apply_plan(ctx, plan_for(ctx, START, DAY_3))

    assert spark_rows(spark, "lhf.by_region") == [("north", 1)]
    table = physical_table("lhf.by_region", plan.version_of("lhf.by_region"))
    assert rows_outside_spark(table_format, table_location(spark, table)) == [("north", 1)]
