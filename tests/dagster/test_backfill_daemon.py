"""Backfills driven by Dagster's own backfill daemon, in-process.

A real instance (``instance_for_test`` with the synchronous in-process run launcher) and the daemon's iteration
(``execute_backfill_iteration``) over an in-process code location: the same path as a backfill launched from the
UI, minus the processes. Runs execute on the shared test Spark session.
"""

from __future__ import annotations

import logging
import shutil
import sys
import time
import uuid
from datetime import datetime
from pathlib import Path

import dagster as dg
import pytest

pytest.importorskip("dagster_sparkmesh.engine.adapter")

from dagster._core.definitions.assets.graph.asset_graph_subset import AssetGraphSubset
from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.test_utils import create_test_daemon_workspace_context
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget
from dagster._daemon.backfill import execute_backfill_iteration

from dagster_sparkmesh.dagster import promotion_key
from dagster_sparkmesh.state.store import open_state_store


PROJECT = Path(__file__).parent / "projects" / "shop"
DEFINITIONS = Path(__file__).parent / "ui" / "daemon_definitions.py"
DAILY, FLAGS = dg.AssetKey(["shop", "daily"]), dg.AssetKey(["shop", "daily_flags"])
EVENTS, SUMMARY = dg.AssetKey(["raw", "events"]), dg.AssetKey(["shop", "summary"])
PROJECT_ENV, WAREHOUSE_ENV = "SPARKMESH_DAEMON_TEST_PROJECT", "SPARKMESH_DAEMON_TEST_WAREHOUSE"  # read by DEFINITIONS
RANGE_TAGS = ("dagster/asset_partition_range_start", "dagster/asset_partition_range_end")


@pytest.fixture
def clean_catalog(spark):
    yield
    for (name,) in spark.sql("SHOW DATABASES").collect():
        if name != "default":
            spark.sql(f"DROP DATABASE IF EXISTS `{name}` CASCADE")


@pytest.fixture
def project_dir(tmp_path, spark, clean_catalog, monkeypatch) -> Path:
    """A copy of the test shop; the code location finds it (and the session's warehouse) in the environment."""
    target = tmp_path / "shop"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    monkeypatch.setenv(PROJECT_ENV, str(target))
    monkeypatch.setenv(WAREHOUSE_ENV, spark.sparkContext.getConf().get("spark.sql.warehouse.dir"))
    return target


@pytest.fixture
def instance():
    """Submitted runs launch at once (no queue daemon here) and run to completion inside the submitting call."""
    overrides = {
        "run_coordinator": {"module": "dagster._core.run_coordinator", "class": "DefaultRunCoordinator"},
        "run_launcher": {"module": "dagster._core.launcher.sync_in_memory_run_launcher", "class": "SyncInMemoryRunLauncher"},
    }
    with dg.instance_for_test(overrides=overrides) as instance:
        yield instance


@pytest.fixture
def workspace(instance, project_dir):
    origin = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(
            executable_path=sys.executable, python_file=str(DEFINITIONS), attribute="defs",
            working_directory=str(DEFINITIONS.parent),
        ),
        location_name="sparkmesh_daemon_test",
    )
    with create_test_daemon_workspace_context(InProcessWorkspaceLoadTarget(origin), instance) as context:
        yield context


def test_daemon_backfills_a_partition_range_in_one_run_then_promotes(spark, project_dir, instance, workspace):
    first = _submit(instance, workspace, {EVENTS: None, DAILY: ("2024-01-01", "2024-01-03"), FLAGS: ("2024-01-01", "2024-01-03")})
    assert _drain(instance, workspace, first) == BulkActionStatus.COMPLETED_SUCCESS

    runs = _runs(instance, first)
    # raw.events first, then ONE run for the whole range of both daily models (single-run backfill policy).
    assert [run.tags.get(RANGE_TAGS[0]) for run in runs] == [None, "2024-01-01"]
    assert runs[1].tags[RANGE_TAGS[1]] == "2024-01-03"
    assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in runs)
    for name in ("shop.daily", "shop.daily_flags"):
        assert _intervals(project_dir, name) == [(datetime(2024, 1, 1), datetime(2024, 1, 4))]
    assert _rows(spark, project_dir, "shop.daily") == 3
    assert not spark.catalog.databaseExists("shop"), "no view before the promotion"

    rest = _submit(instance, workspace, {DAILY: ("2024-01-04", "2024-01-05"), FLAGS: ("2024-01-04", "2024-01-05"),
                                         SUMMARY: None, promotion_key("prod"): None})
    assert _drain(instance, workspace, rest) == BulkActionStatus.COMPLETED_SUCCESS

    assert _intervals(project_dir, "shop.daily") == [(datetime(2024, 1, 1), datetime(2024, 1, 6))]
    assert spark.sql("SELECT COUNT(*) FROM shop.daily").collect()[0][0] == 5
    assert spark.sql("SELECT grand_total, days FROM shop.summary").collect()[0] == (300, 5)
    promoted = instance.get_latest_materialization_event(promotion_key("prod")).asset_materialization
    assert promoted.metadata["views_changed"].value == 4


def _submit(instance, workspace, targets: dict[dg.AssetKey, tuple[str, str] | None]) -> str:
    """A backfill as the UI submits one: unpartitioned assets once, partitioned ones over a key range."""
    asset_graph = workspace.create_request_context().asset_graph
    partitioned, unpartitioned = {}, set()
    for key, keys in targets.items():
        if keys is None:
            unpartitioned.add(key)
            continue
        partitions_def = asset_graph.get(key).partitions_def
        partitioned[key] = partitions_def.empty_subset().with_partition_key_range(
            partitions_def, dg.PartitionKeyRange(*keys)
        )
    backfill_id = uuid.uuid4().hex[:8]
    instance.add_backfill(
        PartitionBackfill.from_asset_graph_subset(
            backfill_id=backfill_id,
            backfill_timestamp=time.time(),
            tags={},
            dynamic_partitions_store=instance,
            asset_graph_subset=AssetGraphSubset(
                partitions_subsets_by_asset_key=partitioned, non_partitioned_asset_keys=unpartitioned
            ),
            title=None,
            description=None,
            run_config=None,
        )
    )
    return backfill_id


def _drain(instance, workspace, backfill_id: str, iterations: int = 12) -> BulkActionStatus:
    """Tick the daemon until the backfill ends; each tick submits the runs whose parents are done, and the
    synchronous launcher runs them to completion before the tick returns."""
    logger = logging.getLogger("sparkmesh.test.backfill_daemon")
    for _ in range(iterations):
        errors = [error for error in execute_backfill_iteration(workspace, logger) if error is not None]
        assert not errors, errors[0].to_string()
        status = instance.get_backfill(backfill_id).status
        if status != BulkActionStatus.REQUESTED:
            return status
    return instance.get_backfill(backfill_id).status


def _runs(instance, backfill_id: str) -> list:
    runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
    return sorted(runs, key=lambda run: instance.get_run_record_by_id(run.run_id).create_timestamp)


def _intervals(project_dir: Path, name: str) -> list[tuple[datetime, datetime]]:
    with open_state_store(None, project_dir) as state:
        versions = {s.name: s.version for s in state.get_snapshots_by_name([name])}
        return [(i.start, i.end) for i in state.get_intervals(name, versions[name])]


def _rows(spark, project_dir: Path, name: str) -> int:
    from dagster_sparkmesh.snapshot.naming import physical_table

    with open_state_store(None, project_dir) as state:
        version = next(s.version for s in state.get_snapshots_by_name([name]))
    return spark.sql(f"SELECT COUNT(*) FROM {physical_table(name, version)}").collect()[0][0]
