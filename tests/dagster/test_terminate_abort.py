"""Terminating a Dagster run, as the UI's Terminate button does, aborts the apply between interval batches.

A deployment in miniature: a gRPC code server (``dagster api grpc``) serving ``terminate_definitions.py``; an
instance in a temp dir whose default run launcher starts each run in a process of that code server; the
multiprocess executor, which runs the step in a process of its own. Every process reaches Spark through one Spark
Connect server (embedded Derby admits a single JVM). ``run_launcher.terminate(run_id)`` is what the UI calls: it
marks the run CANCELING and asks the code server to cancel it; the run worker gets SIGINT and hands it on to the
step process, where sparkmesh stops at the next batch boundary.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.execution.plan.resume_retry import ReexecutionStrategy
from dagster._core.execution.submit_asset_runs import submit_asset_run
from dagster._core.storage.dagster_run import DagsterRunStatus
from dagster._core.test_utils import poll_for_finished_run
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import GrpcServerTarget
from dagster._grpc.client import DagsterGrpcClient

from dagster_sparkmesh.project.config import SparkConnection
from dagster_sparkmesh.state.store import open_state_store

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
DEFINITIONS = Path(__file__).with_name("terminate_definitions.py")
PROJECT_ENV = "SPARKMESH_TERMINATE_TEST_PROJECT"  # read by DEFINITIONS
LOCATION = "sparkmesh_terminate"
PREFIX = f"term_{uuid.uuid4().hex[:6]}"
DAILY_MODEL = f"{PREFIX}_shop.daily"
DAILY = dg.AssetKey([f"{PREFIX}_shop", "daily"])
EVENTS = dg.AssetKey([f"{PREFIX}_raw", "events"])
FIRST_DAY, LAST_DAY = "2024-01-03", "2024-01-08"  # the run's partition range; prod already holds Jan 1-2
RANGE = {"dagster/asset_partition_range_start": FIRST_DAY, "dagster/asset_partition_range_end": LAST_DAY}
BATCH_SECONDS = 3
TIMEOUT = 240

EVENTS_SQL = """\
MODEL (name {p}_raw.events, kind FULL);

SELECT d.ds, i.id, i.id * 10 AS amount
FROM (SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-08', INTERVAL 1 DAY)) AS ds) AS d
CROSS JOIN (SELECT explode(sequence(1, 3)) AS id) AS i
"""

DAILY_PY = '''\
import time

from dagster_sparkmesh import model


@model(
    "{p}_shop.daily",
    kind=dict(name="INCREMENTAL_BY_TIME_RANGE", time_column="ds", batch_size=1),
    columns={{"ds": "date", "total": "bigint"}},
    depends_on=["{p}_raw.events"],
)
def execute(context, start, end, execution_time, **kwargs):
    time.sleep({seconds})  # a slow day, so that the run is still busy when the test terminates it
    return context.spark.sql(
        f"SELECT ds, SUM(amount) AS total FROM {{context.table('{p}_raw.events')}} "
        f"WHERE ds >= DATE'{{start:%Y-%m-%d}}' AND ds <= DATE'{{end:%Y-%m-%d}}' GROUP BY ds"
    )
'''


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def connect_url(tmp_path_factory: pytest.TempPathFactory, spark):  # spark first: see tests/reliability/conftest.py
    """A managed Spark Connect server for this module, always stopped (by its recorded pid)."""
    from dagster_sparkmesh.engine.connect_server import start_server, stop_server
    from dagster_sparkmesh.engine.session import close_sessions

    folder = tmp_path_factory.mktemp("terminate_server")
    connection = SparkConnection(
        mode="managed", master="local[2]", connect_port=_free_port(), config={"spark.sql.shuffle.partitions": "2"}
    )
    try:
        status = start_server(folder, connection)
        yield status.url or ""
    finally:
        close_sessions(folder)
        stop_server(folder)


@pytest.fixture
def project(tmp_path: Path, connect_url: str) -> Path:
    folder = tmp_path / "project"
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text(
        "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  cron: '@daily'\n"
        f"gateways:\n  local:\n    connection:\n      mode: connect\n      remote: {connect_url}\n"
    )
    (folder / "models" / "events.sql").write_text(EVENTS_SQL.format(p=PREFIX))
    (folder / "models" / "daily.py").write_text(DAILY_PY.format(p=PREFIX, seconds=BATCH_SECONDS))
    yield folder
    _drop_schemas(folder)


def _drop_schemas(project: Path) -> None:
    result = _sparkmesh(project, "destroy", "--yes")
    assert result.returncode == 0, result.stdout + result.stderr


def _sparkmesh(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [str(BIN / "sparkmesh"), "-p", str(project), *args],
        capture_output=True, text=True, env=env, timeout=TIMEOUT, cwd=project,
    )


@contextmanager
def code_server(project: Path, log_path: Path):
    """``dagster api grpc`` on a free port in its own process group (its run workers and step processes join it)."""
    port = _free_port()
    env = {**os.environ, PROJECT_ENV: str(project)}
    command = [
        str(BIN / "dagster"), "api", "grpc", "-h", "127.0.0.1", "-p", str(port),
        "--python-file", str(DEFINITIONS), "--location-name", LOCATION,
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, env=env, cwd=project, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _wait_for_ping(DagsterGrpcClient(port=port, host="127.0.0.1"), process, log_path)
        yield port
    finally:
        _stop_group(process)


def _wait_for_ping(client: DagsterGrpcClient, process: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, log_path.read_text(errors="replace")
        try:
            client.ping("ready?")
            return
        except Exception:  # noqa: BLE001 - not serving yet
            assert time.monotonic() < deadline, log_path.read_text(errors="replace")
            time.sleep(0.5)


def _stop_group(process: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _launch(
    instance: dg.DagsterInstance, workspace: WorkspaceProcessContext, asset: dg.AssetKey = DAILY,
    tags: dict[str, str] | None = None,
) -> str:
    """Create and submit a ranged run of the daily asset (or a run of an unpartitioned one), the way the asset
    daemon and the UI's backfills do."""
    request = dg.RunRequest(asset_selection=[asset], tags=(RANGE if asset == DAILY else {}) | (tags or {}))
    run = asyncio.run(
        submit_asset_run(
            None, request, 0, instance, workspace, workspace.create_request_context(), {}, {}, logging.getLogger(__name__)
        )
    )
    return run.run_id


def _re_execute(instance: dg.DagsterInstance, workspace: WorkspaceProcessContext, parent: dg.DagsterRun) -> str:
    """Submit the UI's "Re-execute" of a run (its tags, its selection, all its steps): a resumption, not a
    person's new materialization, so it computes what is missing and restates nothing."""
    context = workspace.create_request_context()
    origin = parent.remote_job_origin.repository_origin
    location = context.get_code_location(origin.code_location_origin.location_name)
    remote_job = location.get_job(
        JobSubsetSelector(
            location_name=location.name, repository_name=origin.repository_name, job_name=parent.job_name,
            op_selection=None, asset_selection=list(parent.asset_selection or ()),
        )
    )
    run = instance.create_reexecuted_run(
        parent_run=parent, request_context=context, code_location=location, remote_job=remote_job,
        strategy=ReexecutionStrategy.ALL_STEPS, use_parent_run_tags=True,
    )
    instance.submit_run(run.run_id, context)
    return run.run_id


def _days_recorded(state, version: str) -> list[datetime]:
    days = []
    for interval in state.get_intervals(DAILY_MODEL, version):
        day = interval.start
        while day < interval.end:
            days.append(day)
            day += timedelta(days=1)
    return days


def _wait_for_first_new_day(state, version: str, instance: dg.DagsterInstance, run_id: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while len(_days_recorded(state, version)) <= 2:
        run = instance.get_run_by_id(run_id)
        assert run is not None and not run.is_finished, f"the run ended before its first day: {run and run.status}"
        assert time.monotonic() < deadline, "the run never recorded a day"
        time.sleep(0.2)


def _view_definitions(project: Path) -> str:
    result = _sparkmesh(project, "fetchdf", f"SHOW CREATE TABLE {DAILY_MODEL}", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _materialized_intervals(instance: dg.DagsterInstance, run_id: str) -> set[int]:
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    return {r.event_log_entry.asset_materialization.metadata["sparkmesh/intervals"].value for r in records}


def test_terminating_the_run_aborts_between_batches_and_a_re_execution_computes_the_rest(project: Path, tmp_path: Path):
    seeded = _sparkmesh(project, "plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-02")
    assert seeded.returncode == 0, seeded.stdout + seeded.stderr
    views_before = _view_definitions(project)
    home = tmp_path / "dagster_home"
    home.mkdir()
    overrides = {
        "run_launcher": {"module": "dagster._core.launcher", "class": "DefaultRunLauncher"},
        "run_coordinator": {"module": "dagster._core.run_coordinator", "class": "DefaultRunCoordinator"},
    }

    with (
        open_state_store(None, project) as state,
        dg.instance_for_test(temp_dir=str(home), overrides=overrides) as instance,
        code_server(project, tmp_path / "code_server.log") as port,
        WorkspaceProcessContext(instance, GrpcServerTarget(host="127.0.0.1", port=port, socket=None, location_name=LOCATION)) as workspace,
    ):
        prod_before = state.get_environment("prod")
        version = next(s.version for s in prod_before.snapshots if s.name == DAILY_MODEL)
        # The FULL parent was built for Jan 1-2 only: a day it does not cover would be computed but left missing.
        # Extended, not restated: a person's restatement of it would restate Jan 1-2 of its reader too.
        extend = _launch(instance, workspace, EVENTS, tags={"sparkmesh/restate": "false"})
        events_run = poll_for_finished_run(instance, extend, timeout=TIMEOUT)
        assert events_run.status == DagsterRunStatus.SUCCESS

        first_run = _launch(instance, workspace)
        _wait_for_first_new_day(state, version, instance, first_run)
        assert instance.run_launcher.terminate(first_run)
        terminated = poll_for_finished_run(instance, first_run, timeout=TIMEOUT)

        assert terminated.status == DagsterRunStatus.CANCELED
        kept = _days_recorded(state, version)
        assert 3 <= len(kept) < 8, kept  # some days of the range completed, not all
        assert kept == [datetime(2024, 1, d) for d in range(1, len(kept) + 1)]  # in order, none half-recorded
        log = {app.plan_id: app for app in state.list_plan_applications()}
        aborted = log[f"dagster-{first_run}"]
        assert (aborted.environment, aborted.outcome) == ("prod", "aborted")
        assert state.get_environment("prod") == prod_before
        assert _view_definitions(project) == views_before

        second_run = _re_execute(instance, workspace, terminated)
        finished = poll_for_finished_run(instance, second_run, timeout=TIMEOUT)

        assert finished.status == DagsterRunStatus.SUCCESS
        assert _materialized_intervals(instance, second_run) == {8 - len(kept)}  # only the days still missing
        assert _days_recorded(state, version) == [datetime(2024, 1, d) for d in range(1, 9)]
        assert state.get_environment("prod") == prod_before
