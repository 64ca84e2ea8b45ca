"""The change loop through Dagster's own machinery: a real ``dagster-daemon`` process evaluates the git sensor.

The test shop lives in a git repository; a code location serves it with the sensor running. The daemon's sensor
loop ticks (``evaluate_tick``, run requests resolved against the sensor's target), its run queue launches the
ranged runs as processes of their own, and they share the project's managed Spark Connect server. Then:

1. a first commit with ``approval="none"``: plan → daemon-launched runs → promotion → prod equals a fresh build;
2. the daemon again with ``approval="promotion"`` (prod's default) and a second commit: the backfill runs, prod
   keeps the first commit's data while the plan waits; materializing the promotion asset (``dagster asset
   materialize``, a person's run) approves it, and prod then equals a fresh build of the second commit;
3. a third commit whose query fails on the data: the tick names the failed run; its revert has nothing to do.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
import pytest

sys.path.insert(0, str(Path(__file__).parent / "ui"))

from shop_daemon import SHOP, Daemon, daemon_workspace, git, shop_repository, stop_spark  # noqa: E402

from dagster_sparkmesh.dagster.sensor import Cursor  # noqa: E402

pytestmark = pytest.mark.e2e

PROMOTE = dg.AssetKey(["sparkmesh", "promote_prod"])
TABLES = ("raw.events", "shop.daily", "shop.daily_flags", "shop.summary")
WAIT = 420.0  # a busy 2-core machine: the Connect server's start, several run processes
DEFINITIONS = '''
import os

import dagster as dg

from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_definitions

project = os.environ["SPARKMESH_LOOP_PROJECT"]
defs = build_sparkmesh_definitions(
    project,
    resource=SparkMeshResource(project_dir=project),
    sensor_status=dg.DefaultSensorStatus.RUNNING,
    sensor_interval_seconds=3,
    approval=os.environ["SPARKMESH_LOOP_APPROVAL"],
    git_link=None,
)
'''


def _sparkmesh(project: Path, *args: str, timeout: float = 300) -> str:
    done = subprocess.run([str(Path(sys.executable).parent / "sparkmesh"), "-p", str(project), *args],
                          capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"sparkmesh {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout


_ROWS_QUERY = " UNION ALL ".join(f"SELECT '{table}' AS t, to_json(struct(*)) AS r FROM {table}" for table in TABLES)


def _rows(project: Path) -> dict[str, list[str]]:
    """Every table as the project's prod views serve it, each row as JSON, sorted (one process, one query)."""
    return _by_table(_sparkmesh(project, "fetchdf", "--json", _ROWS_QUERY))


def _by_table(output: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {table: [] for table in TABLES}
    for row in json.loads(output):
        found[row["t"]].append(row["r"])
    return {table: sorted(rows) for table, rows in found.items()}


class FreshBuild:
    """The oracle: the same files planned and applied from nothing, in a Spark of its own (local mode). It runs in
    the background from the moment the commit is made, while the daemon works (two processes: plan, then query)."""

    def __init__(self, repo: Path, target: Path) -> None:
        shutil.copytree(repo, target, ignore=shutil.ignore_patterns(".sparkmesh", ".git"))
        (target / "config.yaml").write_text((SHOP / "config.yaml").read_text())
        sparkmesh = Path(sys.executable).parent / "sparkmesh"
        script = f"'{sparkmesh}' -p '{target}' plan prod --auto-apply >&2 && '{sparkmesh}' -p '{target}' fetchdf --json \"$0\""
        self.process = subprocess.Popen(["bash", "-c", script, _ROWS_QUERY], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)

    def stop(self) -> None:
        """A test that failed before reading the rows leaves no process behind."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()

    def rows(self) -> dict[str, list[str]]:
        out, err = self.process.communicate(timeout=WAIT)
        assert self.process.returncode == 0, err[-3000:]
        return _by_table(out)


@pytest.fixture
def repo(tmp_path) -> Iterator[Path]:
    target = shop_repository(tmp_path / "shop")
    yield target
    stop_spark(target)


@pytest.fixture
def home(tmp_path, repo, monkeypatch) -> Path:
    daemon_workspace(tmp_path, DEFINITIONS, "loop")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.setenv("SPARKMESH_LOOP_PROJECT", str(repo))
    return tmp_path / "dagster_home"


def _daemon(workspace: Path, approval: str) -> Daemon:
    return Daemon(workspace, {"SPARKMESH_LOOP_APPROVAL": approval}, f"daemon-{approval}.log")


def _wait(what: str, done: Callable[[], bool], daemon: Daemon) -> None:
    daemon.wait(what, done, WAIT)


def _runs(instance: dg.DagsterInstance, head: str) -> list[dg.DagsterRun]:
    return list(instance.get_runs(filters=dg.RunsFilter(tags={"sparkmesh/commit": head})))


def _settled(instance: dg.DagsterInstance, head: str, promoted: bool) -> bool:
    """Every run of the commit succeeded, and the promotion ran (or was never requested)."""
    runs = _runs(instance, head)
    failed = [r for r in runs if r.status in (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED)]
    assert not failed, f"runs failed: {[(r.run_id, r.asset_selection) for r in failed]}"
    promotions = [r for r in runs if r.asset_selection == {PROMOTE}]
    backfills = [r for r in runs if r.asset_selection != {PROMOTE}]
    if not backfills or any(r.status != dg.DagsterRunStatus.SUCCESS for r in runs):
        return False
    return bool(promotions) if promoted else not promotions


def _awaiting_approval(instance: dg.DagsterInstance, head: str) -> bool:
    records = instance.fetch_observations(PROMOTE, limit=5).records
    observed = [r.asset_observation for r in records if r.asset_observation is not None]
    return any(o.metadata["commit"].value == head and o.metadata["status"].value.startswith("backfilled; awaiting")
               for o in observed)


@pytest.fixture
def fresh(tmp_path) -> Iterator[Callable[[Path, str], FreshBuild]]:
    started: list[FreshBuild] = []

    def start(repo: Path, name: str) -> FreshBuild:
        started.append(FreshBuild(repo, tmp_path / name))
        return started[-1]

    yield start
    for build in started:
        build.stop()


def test_commits_are_planned_backfilled_and_promoted_by_the_daemon(repo, home, tmp_path, fresh):
    workspace = tmp_path / "workspace.yaml"
    first = git(repo, "rev-parse", "HEAD")
    instance = dg.DagsterInstance.get()

    fresh_first = fresh(repo, "fresh_first")
    daemon = _daemon(workspace, "none")
    try:
        _wait("the first commit's runs and promotion", lambda: _settled(instance, first, promoted=True), daemon)
    finally:
        daemon.stop()
    first_prod = _rows(repo)
    assert first_prod == fresh_first.rows()
    plan_ids = {run.tags["sparkmesh/plan_id"] for run in _runs(instance, first)}
    assert len(plan_ids) == 1  # every run of the commit executed the one plan the sensor built

    daily = repo / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("COUNT(*) AS orders", "COUNT(*) * 2 AS orders"))
    git(repo, "commit", "-qam", "second")
    second = git(repo, "rev-parse", "HEAD")
    fresh_second = fresh(repo, "fresh_second")
    daemon = _daemon(workspace, "promotion")
    try:
        _wait("the second commit's backfill", lambda: _settled(instance, second, promoted=False), daemon)
        _wait("the plan awaiting approval", lambda: _awaiting_approval(instance, second), daemon)
        assert _rows(repo) == first_prod  # backfilled, not promoted: prod's views wait for a person
        approve = subprocess.run(
            [str(Path(sys.executable).parent / "dagster"), "asset", "materialize", "-f", str(tmp_path / "definitions.py"),
             "--select", PROMOTE.to_user_string()],
            env={**os.environ, "SPARKMESH_LOOP_APPROVAL": "promotion"}, cwd=tmp_path,
            capture_output=True, text=True, timeout=300, check=False,
        )
        assert approve.returncode == 0, approve.stderr[-3000:]
        second_prod = _rows(repo)
        assert second_prod != first_prod
        assert second_prod == fresh_second.rows()
        _wait("the sensor to see the approval", lambda: _cursor(instance).phase == "done", daemon)
        assert _cursor(instance).commit == second

        # A commit whose query fails on the data: its run fails once, and the tick names it for a person (Dagster
        # would skip its run key as completed forever). Reverting it brings back the served version: nothing to do.
        daily.write_text(daily.read_text().replace(
            "COUNT(*) * 2 AS orders", "COUNT(*) * 2 AS orders, CAST(assert_true(SUM(amount) < 0, 'a broken commit') AS INT) AS verified"))
        git(repo, "commit", "-qam", "broken")
        broken = git(repo, "rev-parse", "HEAD")
        named = "failed: open it on the Runs page and Re-execute it"
        _wait("the tick to name the failed run", lambda: named in daemon.log.read_text(errors="replace"), daemon)
        [failed] = [r for r in _runs(instance, broken) if r.status == dg.DagsterRunStatus.FAILURE]
        assert f"run {failed.run_id[:8]} (shop/daily" in daemon.log.read_text(errors="replace")
        assert _rows(repo) == second_prod
        git(repo, "revert", "--no-edit", "HEAD")
        fixed = git(repo, "rev-parse", "HEAD")
        _wait("the revert planned", lambda: _cursor(instance) == Cursor(fixed, "done", _cursor(instance).plan_id), daemon)
        assert len(_runs(instance, broken)) == 1 and not _runs(instance, fixed)
    finally:
        daemon.stop()


def _cursor(instance: dg.DagsterInstance) -> Cursor:
    """The git sensor's cursor as the daemon stored it."""
    state = next(s for s in instance.all_instigator_state() if s.name == "sparkmesh_prod_git_sensor")
    return Cursor.parse(state.instigator_data.cursor if state.instigator_data else None)
