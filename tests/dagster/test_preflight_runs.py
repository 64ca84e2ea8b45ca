"""The Dagster step runs the preflight before it registers snapshots: a refused step fails and writes nothing."""

from __future__ import annotations

import uuid

import dagster as dg
import pytest

pytest.importorskip("dagster_sparkmesh.engine.adapter")

from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_specs, sparkmesh_assets  # noqa: E402
from dagster_sparkmesh.project.loader import load_project  # noqa: E402
from dagster_sparkmesh.state.store import open_state_store  # noqa: E402


CONFIG = "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  cron: '@daily'\n"


def test_a_step_whose_time_column_is_wrong_fails_before_registering_snapshots(spark, tmp_path, clean_catalog):
    schema = f"pf_{uuid.uuid4().hex[:8]}"
    project_dir = tmp_path / "p"
    (project_dir / "models").mkdir(parents=True)
    (project_dir / "config.yaml").write_text(CONFIG)
    (project_dir / "models" / "daily.sql").write_text(
        f"MODEL (name {schema}.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));\n\nSELECT 1.5D AS ds, 1 AS n\n"
    )
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    resource = SparkMeshResource(project_dir=str(project_dir), spark_config={"spark.sql.warehouse.dir": warehouse})
    project = load_project(project_dir, use_cache=False)
    tags = {"dagster/asset_partition_range_start": "2024-01-01", "dagster/asset_partition_range_end": "2024-01-02"}

    with dg.instance_for_test() as instance:
        result = dg.materialize(
            sparkmesh_assets(project=project, specs=build_sparkmesh_specs(project)),
            resources={"sparkmesh": resource},
            instance=instance,
            tags=tags,
            raise_on_error=False,
        )

    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.user_failure_data
    assert f"model {schema}.daily: its time column ds is a double" in failure.description
    assert failure.metadata["error"].value == "BadTimeColumn"
    assert result.get_asset_materialization_events() == []
    with open_state_store(None, project_dir) as state:
        assert state.all_snapshots() == [], "no snapshot registered for a refused run"
    databases = {row[0] for row in spark.sql("SHOW DATABASES").collect()}
    assert f"sparkmesh__{schema}" not in databases
