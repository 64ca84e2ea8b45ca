"""What a model's write goes on despite reaches the Dagster run's log as a warning: an SCD type 2 model whose query
returns several rows for a key keeps one, as SQLMesh keeps one, and says so where a person reads the run."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import dagster as dg
import pytest

from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_specs, sparkmesh_assets
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.state.store import open_state_store

PROJECT = Path(__file__).parent / "projects" / "shop"
EVENTS, BY_ID = dg.AssetKey(["raw", "events"]), dg.AssetKey(["shop", "amount_by_id"])
# raw.events holds each id once a day: five rows per key.
AMOUNT_BY_ID = """
MODEL (name shop.amount_by_id, kind SCD_TYPE_2_BY_COLUMN (unique_key id, columns [amount]));

SELECT id, amount FROM raw.events
"""


@pytest.fixture
def project_dir(tmp_path, clean_catalog) -> Path:
    target = tmp_path / "shop"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    (target / "models" / "amount_by_id.sql").write_text(AMOUNT_BY_ID)
    return target


def test_a_repeated_key_of_an_scd_type_2_model_is_a_warning_in_the_run_log(spark, project_dir):
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    resource = SparkMeshResource(project_dir=str(project_dir), spark_config={"spark.sql.warehouse.dir": warehouse})
    project = load_project(project_dir, use_cache=False)
    assets = sparkmesh_assets(project=project, specs=build_sparkmesh_specs(project))
    with dg.instance_for_test() as instance:
        def materialize(selection):
            return dg.materialize(assets, selection=selection, resources={"sparkmesh": resource}, instance=instance,
                                  raise_on_error=False)

        assert materialize([EVENTS]).success
        result = materialize([BY_ID])
        assert result.success
        warnings = [entry.user_message for entry in instance.all_logs(result.run_id) if entry.level == logging.WARNING]
    [warning] = [message for message in warnings if "several rows for unique_key id" in message]
    assert warning.startswith("sparkmesh: shop.amount_by_id (") and "amount_by_id.sql:" in warning
    assert "one row per key is kept" in warning and "Deduplicate in the query" in warning
    with open_state_store(None, project_dir) as state:
        [snapshot] = state.get_snapshots_by_name(["shop.amount_by_id"])
    rows = spark.sql(f"SELECT COUNT(*), COUNT(DISTINCT id) FROM {physical_table(snapshot.name, snapshot.version)}")
    assert tuple(rows.collect()[0]) == (3, 3)  # one row per key kept
