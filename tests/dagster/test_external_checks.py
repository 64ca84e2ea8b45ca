"""The audits of an external model are asset checks of its external asset, runnable by themselves on Spark."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_definitions

CONFIG = "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n"


def _project(path: Path, schema: str) -> Path:
    (path / "models").mkdir(parents=True)
    (path / "config.yaml").write_text(CONFIG)
    (path / "external_models.yaml").write_text(
        f"- name: {schema}.customers\n  audits:\n    - name: not_null\n      columns: '[zip]'\n"
        "    - name: unique_values_non_blocking\n      columns: '[id]'\n  columns: {id: int, zip: string}\n"
    )
    (path / "models" / "zips.sql").write_text(f"MODEL (name out.zips, kind FULL);\nSELECT zip FROM {schema}.customers\n")
    return path


def test_external_audits_run_as_checks_of_the_external_asset(tmp_path, spark, schema):
    spark.sql(f"CREATE TABLE {schema}.customers USING parquet AS SELECT * FROM VALUES (1, NULL), (2, 'b') AS t(id, zip)")
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    project = _project(tmp_path / "p", schema)
    resource = SparkMeshResource(project_dir=str(project), spark_config={"spark.sql.warehouse.dir": warehouse})
    defs = build_sparkmesh_definitions(project, resource=resource, sensor=False, automation_sensor_status=None)
    key = dg.AssetKey([schema, "customers"])
    graph = defs.resolve_asset_graph()
    assert {(c.asset_key, c.name) for c in graph.asset_check_keys} == {(key, "not_null"), (key, "unique_values_non_blocking")}

    audit_job = dg.define_asset_job("audit_customers", selection=dg.AssetSelection.checks_for_assets(key))
    job = dg.Definitions.merge(defs, dg.Definitions(jobs=[audit_job])).resolve_job_def("audit_customers")
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(instance=instance, raise_on_error=False)
    evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert evaluations["not_null"].passed is False
    assert evaluations["not_null"].metadata["failing_rows"].value == 1
    assert evaluations["not_null"].severity == dg.AssetCheckSeverity.ERROR
    assert evaluations["unique_values_non_blocking"].passed is True


def test_the_external_asset_records_its_start_and_file(tmp_path):
    project = _project(tmp_path / "p", "raw")
    text = (project / "external_models.yaml").read_text().replace("  columns: {id", "  start: 2023-06-01\n  columns: {id")
    (project / "external_models.yaml").write_text(text)
    defs = build_sparkmesh_definitions(project, sensor=False, automation_sensor_status=None)
    spec = defs.resolve_asset_graph().get(dg.AssetKey(["raw", "customers"]))
    assert spec.metadata["sparkmesh/start"] == "2023-06-01"
    assert spec.metadata["sparkmesh/path"].path == str(project / "external_models.yaml")
