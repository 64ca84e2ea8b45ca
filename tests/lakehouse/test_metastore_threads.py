"""Iceberg's Hive client and Spark's share the embedded metastore's connection factory: the daily plans of a
project (each plan's model and view workers are new threads) must not rebuild it. They did while the two clients
saw different datastore settings: a new thread's metastore store rebuilt the factory and its two connection pools
(their threads stayed), and that thread's first table look-up waited 0.15-0.9 s for them: half of a one-day write."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for

pytestmark = [pytest.mark.lakehouse, pytest.mark.iceberg_only]


def _pools(spark) -> set[str]:
    """The connection pools alive in the JVM, by the names of their housekeeping threads."""
    threads = spark._jvm.java.lang.Thread.getAllStackTraces().keySet().toArray()
    return {str(thread.getName()).split(" ")[0] for thread in threads if str(thread.getName()).startswith("HikariPool-")}


def test_daily_plans_reuse_the_metastore_connection_pools(spark, lakehouse_project, make_context):
    first = datetime(2024, 1, 3)
    ctx = make_context(lakehouse_project, clock=first)
    apply_plan(ctx, plan_for(ctx, None))
    before = _pools(spark)
    for day in range(1, 4):  # a daily run each day
        ctx = make_context(lakehouse_project, clock=first + timedelta(days=day))
        apply_plan(ctx, plan_for(ctx, None))
    assert spark.sql("SELECT COUNT(*) FROM lhm.daily").collect()[0][0] == 5
    assert _pools(spark) == before
