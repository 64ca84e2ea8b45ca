"""A CUSTOM model in Dagster: a daily partitioned asset whose partition range runs its materialization class."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import dagster as dg
import pytest

from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_specs, sparkmesh_assets
from dagster_sparkmesh.dagster.promotion import promotion_asset
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.state.store import open_state_store


PROJECT = Path(__file__).parent / "projects" / "shop"
EVENTS, KEPT = dg.AssetKey(["raw", "events"]), dg.AssetKey(["shop", "kept_events"])
APPENDING = '''
from sqlmesh import CustomMaterialization


class Appending(CustomMaterialization):
    NAME = "appending"

    def insert(self, table_name, query_or_df, model, is_first_insert, render_kwargs, **kwargs):
        self.adapter.insert_append(table_name, query_or_df)
'''
KEPT_EVENTS = """
MODEL (name shop.kept_events, kind CUSTOM (materialization 'appending'));

SELECT ds, id, amount FROM raw.events WHERE ds BETWEEN @start_ds AND @end_ds
"""


@pytest.fixture
def project_dir(tmp_path, clean_catalog) -> Path:
    target = tmp_path / "shop"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    (target / "materializations").mkdir()
    (target / "materializations" / "appending.py").write_text(APPENDING)
    (target / "models" / "kept_events.sql").write_text(KEPT_EVENTS)
    return target


def _assets(project_dir: Path):
    project = load_project(project_dir, use_cache=False)
    specs = build_sparkmesh_specs(project)
    return [*sparkmesh_assets(project=project, specs=specs), promotion_asset(project, specs)]


def test_a_partition_range_of_a_custom_model_runs_its_class_once_per_batch(spark, project_dir):
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    resource = SparkMeshResource(project_dir=str(project_dir), spark_config={"spark.sql.warehouse.dir": warehouse})
    assets = _assets(project_dir)
    kept = next(a for a in assets if KEPT in a.keys)
    assert isinstance(kept.partitions_def, dg.DailyPartitionsDefinition)
    with dg.instance_for_test() as instance:
        def materialize(selection, tags=None):
            return dg.materialize(assets, selection=selection, resources={"sparkmesh": resource}, instance=instance,
                                  tags=tags or {}, raise_on_error=False)

        assert materialize([EVENTS]).success
        ranged = {"dagster/asset_partition_range_start": "2024-01-02", "dagster/asset_partition_range_end": "2024-01-03"}
        result = materialize([KEPT], ranged)
        assert result.success
        partitions = sorted(e.materialization.partition for e in result.get_asset_materialization_events())
        assert partitions == ["2024-01-02", "2024-01-03"]
    with open_state_store(None, project_dir) as state:
        version = {s.name: s.version for s in state.get_snapshots_by_name(["shop.kept_events"])}["shop.kept_events"]
        intervals = [(i.start, i.end) for i in state.get_intervals("shop.kept_events", version)]
    assert intervals == [(datetime(2024, 1, 2), datetime(2024, 1, 4))]
    rows = spark.sql(f"SELECT CAST(ds AS STRING), COUNT(*) FROM {physical_table('shop.kept_events', version)} GROUP BY ds ORDER BY 1")
    assert [tuple(r) for r in rows.collect()] == [("2024-01-02", 3), ("2024-01-03", 3)]
