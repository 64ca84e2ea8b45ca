"""Issue 11, steps 1-4, on real Dagster runs and Spark: prod must equal what the files compute.

A copy of the example shop whose daily models end on 2024-01-10 (ten partitions instead of a thousand): raw and
staging materialized, then a ranged run of the shop group over three days with its FULL models built from those
days, then every partition, then the promotion. The FULL models read the daily ones, so after the last run they
must have been rebuilt from all ten days: ``SUM(lifetime_orders)`` of ``shop.customers`` counts every fact row.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import dagster as dg
import pytest

pytest.importorskip("dagster_sparkmesh.engine.adapter")

from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_specs, promotion_key, sparkmesh_assets  # noqa: E402
from dagster_sparkmesh.dagster.promotion import promotion_asset  # noqa: E402
from dagster_sparkmesh.project.loader import load_project  # noqa: E402


EXAMPLE = Path(__file__).resolve().parents[2] / "example_project"
LAST_DAY = "2024-01-10"
FULL_SHOP = [dg.AssetKey(["shop", name]) for name in ("customers", "product_performance", "customer_segments")]


@pytest.fixture
def project_dir(tmp_path, spark, clean_catalog) -> Path:
    target = tmp_path / "shop"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".sparkmesh", "__pycache__", "definitions.py"))
    for model in (target / "models").rglob("*.sql"):
        text = model.read_text()
        if "INCREMENTAL_BY" in text:
            model.write_text(re.sub(r"MODEL \(\n", f"MODEL (\n  end '{LAST_DAY}',\n", text, count=1))
    # raw.web_events is external: the example's Dagster resource creates it as a CSV table; here the test does.
    spark.sql("CREATE DATABASE IF NOT EXISTS raw")
    spark.sql(
        "CREATE TABLE raw.web_events (event_id BIGINT, customer_id INT, event_type STRING, event_ts TIMESTAMP) "
        f"USING csv OPTIONS (header 'true') LOCATION '{(target / 'external_data').as_posix()}'"
    )
    return target


@pytest.fixture
def resource(spark, project_dir) -> SparkMeshResource:
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    return SparkMeshResource(project_dir=str(project_dir), spark_config={"spark.sql.warehouse.dir": warehouse})


def test_prod_after_a_short_range_then_every_partition_counts_every_fact_row(spark, project_dir, resource):
    project = load_project(project_dir, use_cache=False)
    specs = build_sparkmesh_specs(project)
    assets = [*sparkmesh_assets(project=project, specs=specs), promotion_asset(project, specs)]
    daily_shop = [spec.key for spec in specs.model_specs if spec.group_name == "shop" and spec.partitions_def]

    def run(selection, partitions: tuple[str, str] | None = None) -> dg.ExecuteInProcessResult:
        tags = {}
        if partitions:
            tags = {"dagster/asset_partition_range_start": partitions[0], "dagster/asset_partition_range_end": partitions[1]}
        result = dg.materialize(
            assets, selection=selection, resources={"sparkmesh": resource}, instance=instance, tags=tags,
            raise_on_error=False,
        )
        assert result.success, [str(e.step_failure_data.error) for e in result.all_events if e.is_step_failure]
        return result

    with dg.instance_for_test() as instance:
        run(dg.AssetSelection.groups("raw", "staging"))
        run(daily_shop, ("2024-01-01", "2024-01-03"))  # step 1: three days of the shop group...
        run(FULL_SHOP)  # ... and its FULL models, built from those three days
        run(daily_shop, ("2024-01-01", LAST_DAY))  # step 2: every partition
        rebuilt = run(FULL_SHOP)
        run([promotion_key("prod")])  # step 3

    # The FULL models read the daily ones' new days: rebuilt, not "up to date".
    materialized = {event.materialization.asset_key: event.materialization for event in rebuilt.get_asset_materialization_events()}
    assert set(materialized) == set(FULL_SHOP)
    assert not [key for key, event in materialized.items() if "sparkmesh/up_to_date" in event.metadata]
    assert not [key for key, event in materialized.items() if "dagster/column_lineage" in event.metadata]  # on the spec
    # Step 4: prod equals what the files compute from every day.
    fact_rows, fact_units = spark.sql("SELECT COUNT(*), SUM(quantity) FROM shop.fct_orders").collect()[0]
    assert fact_rows > 0
    assert spark.sql("SELECT SUM(lifetime_orders) FROM shop.customers").collect()[0][0] == fact_rows
    assert spark.sql("SELECT SUM(units_sold) FROM shop.product_performance").collect()[0][0] == fact_units
    assert spark.sql("SELECT SUM(lifetime_orders) FROM shop.customer_segments").collect()[0][0] == fact_rows
    first, last = spark.sql("SELECT MIN(ds), MAX(ds) FROM shop.fct_orders").collect()[0]
    assert first.isoformat() == "2024-01-01" and "2024-01-03" < last.isoformat() <= LAST_DAY
