"""A project whose models are named catalog.schema.table plans and applies on Spark: every object is in the
session's Hive metastore, the catalog folded into the schema (``shopcat.silver.orders`` → ``shopcat__silver``)."""

import shutil
from datetime import datetime

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for

from .conftest import PROJECTS


@pytest.fixture
def catalog_project(tmp_path, clean_catalog, spark):
    target = tmp_path / "catalog_names"
    shutil.copytree(PROJECTS / "catalog_names", target)
    spark.sql("CREATE DATABASE IF NOT EXISTS crm")
    spark.sql("CREATE TABLE crm.customers (customer_id INT, region STRING) USING parquet")
    spark.sql("INSERT INTO crm.customers VALUES (1, 'eu'), (2, 'us')")
    return target


def test_models_named_with_catalogs_plan_apply_and_promote(spark, catalog_project, make_context):
    ctx = make_context(catalog_project)
    plan = plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3))
    assert [i.start.day for i in plan.missing_intervals["shopcat.bronze.raw_orders"]] == [1, 2]
    apply_plan(ctx, plan)

    # Views: the catalog is folded into the schema; spark_catalog is dropped.
    assert spark.sql("SELECT COUNT(*) FROM shopcat__bronze.raw_orders").collect()[0][0] == 4
    rows = spark.sql("SELECT region, revenue FROM gold.revenue ORDER BY region").collect()
    assert [tuple(r) for r in rows] == [("eu", 20), ("us", 40)]
    assert spark.sql("SELECT region FROM spark_catalog.gold.top_region").collect()[0][0] == "us"
    listed = spark.sql("SHOW TABLES IN sparkmesh__shopcat__silver").collect()
    tables = {r.tableName for r in listed if not r.isTemporary}  # the shared session's temp views are listed too
    [physical] = [table for table in tables if not table.endswith("__data")]  # a FULL model's view over its data
    assert physical.startswith("shopcat__silver__orders__") and tables == {physical, f"{physical}__data"}

    # A development environment (a view of every model: nothing changed in it): views in <folded schema>__dev,
    # the tables reused.
    dev = make_context(catalog_project, "dev")
    apply_plan(dev, plan_for(dev, datetime(2024, 1, 1), datetime(2024, 1, 3), include_unmodified=True))
    assert spark.sql("SELECT COUNT(*) FROM shopcat__silver__dev.orders").collect()[0][0] == 4
