"""Standalone audits as Dagster asset checks: on the last model they read, depending on the others, executed for real
(in process, on the shared local Spark session) with a pass and a failure."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_specs, promotion_key, sparkmesh_assets
from dagster_sparkmesh.dagster.promotion import promotion_asset
from dagster_sparkmesh.dagster.standalone_checks import standalone_audit_checks, standalone_check_specs
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.project.loader import load_project

AUDITED = Path(__file__).parents[1] / "execution" / "projects" / "audited"
DAILY, EVENTS = dg.AssetKey(["shop", "daily"]), dg.AssetKey(["raw", "events"])
MATCHES = dg.AssetCheckKey(DAILY, "daily_matches_events")
NAMES = frozenset({"shop.daily", "raw.events"})


@pytest.fixture
def project_dir(tmp_path) -> Path:
    target = tmp_path / "audited"
    shutil.copytree(AUDITED, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    return target


def test_each_audit_is_a_check_on_the_last_model_it_reads_with_the_others_as_deps(project_dir):
    (project_dir / "audits" / "skipped.sql").write_text("AUDIT (name skipped, standalone true, skip true);\n"
                                                       "SELECT * FROM shop.daily WHERE total < 0\n")
    specs = standalone_check_specs(load_project(project_dir, use_cache=False), SparkMeshTranslator(), NAMES)

    assert list(specs) == ["big_totals", "daily_matches_events"]
    matches = specs["daily_matches_events"]
    assert (matches.key, matches.blocking) == (MATCHES, True)
    assert [dep.asset_key for dep in matches.additional_deps] == [EVENTS]
    assert matches.description == "every daily total is the sum of its events"
    assert (specs["big_totals"].blocking, list(specs["big_totals"].additional_deps)) == (False, [])


def _definitions(project_dir: Path) -> list:
    project = load_project(project_dir, use_cache=False)
    specs = build_sparkmesh_specs(project)
    return [*sparkmesh_assets(project=project, specs=specs), promotion_asset(project, specs),
            *standalone_audit_checks(project, SparkMeshTranslator(), "prod", NAMES)]


def test_the_check_runs_after_its_models_and_fails_on_offending_rows_and_the_promotion_refuses(
    spark, project_dir, clean_catalog
):
    daily = project_dir / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("  grain ds", "  grain ds,\n  end '2024-01-05'"))  # a window to complete
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    resources = {"sparkmesh": SparkMeshResource(project_dir=str(project_dir), spark_config={"spark.sql.warehouse.dir": warehouse})}
    days = {"dagster/asset_partition_range_start": "2024-01-01", "dagster/asset_partition_range_end": "2024-01-05"}
    with dg.instance_for_test() as instance:
        assert dg.materialize(_definitions(project_dir), selection=[EVENTS], resources=resources, instance=instance).success
        passed = dg.materialize(_definitions(project_dir), selection=dg.AssetSelection.assets(DAILY),
                                resources=resources, instance=instance, tags=days)
        assert passed.success
        checks = {c.check_name: c for c in passed.get_asset_check_evaluations()}
        assert (checks["daily_matches_events"].passed, checks["big_totals"].passed) == (True, True)
        assert "shop__daily__" in checks["daily_matches_events"].metadata["query"].value

        audit = project_dir / "audits" / "checks" / "daily_matches_events.sql"
        audit.write_text(audit.read_text().replace("d.total <> e.total", "d.total = e.total"))
        failed = dg.materialize(_definitions(project_dir), selection=dg.AssetSelection.checks(MATCHES),
                                resources=resources, instance=instance, raise_on_error=False)
        [check] = failed.get_asset_check_evaluations()
        assert (check.check_name, check.passed, check.severity) == ("daily_matches_events", False, dg.AssetCheckSeverity.ERROR)
        assert check.metadata["failing_rows"].value == 5

        refused = dg.materialize(_definitions(project_dir), selection=[promotion_key("prod")], resources=resources,
                                 instance=instance, raise_on_error=False)
        assert not refused.success
        failure = next(e for e in refused.all_events if e.is_step_failure).step_failure_data.user_failure_data
        assert "blocking standalone audit failed: daily_matches_events (5 offending row(s))" in failure.description
        assert not spark.catalog.databaseExists("shop")  # no view moved

        audit.write_text(audit.read_text().replace("d.total = e.total", "d.total <> e.total"))
        promoted = dg.materialize(_definitions(project_dir), selection=[promotion_key("prod")], resources=resources,
                                  instance=instance)
        assert promoted.success and spark.sql("SELECT COUNT(*) FROM shop.daily").collect()[0][0] == 5
