"""The git sensor on a temporary repository with two commits: plan, ranged runs, promotion, once per commit."""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import dagster as dg
import pytest

from dagster_sparkmesh.dagster import ReloadTarget, sparkmesh_git_sensor
from dagster_sparkmesh.dagster.sensor import Cursor, StatePlanner
from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.state.store import open_state_store

PROJECT = Path(__file__).parent / "projects" / "shop"
NOW = datetime(2024, 1, 6)
RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path) -> Path:
    target = tmp_path / "repo"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    (target / ".gitignore").write_text(".sparkmesh/\n")
    _git(target, "init", "-q")
    _git(target, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", ".")
    _git(target, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "first")
    return target


def _plan(project):
    with open_state_store(None, project.path) as state:
        return build_plan(project, state, "prod", execution_time=NOW)


def _sensor(repo: Path, reload: ReloadTarget | None = None) -> dg.SensorDefinition:
    return sparkmesh_git_sensor(
        project_dir=repo,
        environment="prod",
        load_project=lambda: load_project(repo, use_cache=False),
        planner=StatePlanner("prod", None, clock=lambda: NOW),
        reload=reload,
    )


def _tick(sensor: dg.SensorDefinition, cursor: str | None, instance) -> dg.SensorResult:
    return sensor(dg.build_sensor_context(cursor=cursor, instance=instance))


def _requests(result: dg.SensorResult) -> dict[tuple[str, ...], dict[str, str]]:
    return {
        tuple(sorted(key.to_user_string() for key in request.asset_selection)): request
        for request in result.run_requests or []
    }


def _complete_backfill(repo: Path) -> None:
    """What the requested runs would do to the state: push the snapshots and record every missing interval."""
    project = load_project(repo, use_cache=False)
    plan = _plan(project)
    with open_state_store(None, repo) as state:
        state.push_snapshots(plan.new_snapshots)
        for name, intervals in plan.missing_intervals.items():
            state.add_intervals(name, plan.version_of(name), list(intervals))


def test_new_commit_requests_ranged_runs_then_promotion_then_nothing(repo):
    sensor = _sensor(repo)
    head = _git(repo, "rev-parse", "HEAD")
    with dg.instance_for_test() as instance:
        first = _tick(sensor, None, instance)
        requests = _requests(first)
        assert set(requests) == {("raw/events", "shop/summary"), ("shop/daily", "shop/daily_flags")}
        daily = requests[("shop/daily", "shop/daily_flags")]
        assert (daily.tags[RANGE_START], daily.tags[RANGE_END]) == ("2024-01-01", "2024-01-05")
        assert RANGE_START not in requests[("raw/events", "shop/summary")].tags
        assert all(r.run_key.startswith(head) and r.tags["sparkmesh/commit"] == head for r in requests.values())
        assert "shop.daily" in daily.tags["sparkmesh/plan"]
        plan_id = daily.tags["sparkmesh/plan_id"]
        assert {r.tags["sparkmesh/plan_id"] for r in requests.values()} == {plan_id}
        assert Cursor.parse(first.cursor) == Cursor(head, "backfilling", plan_id)
        with open_state_store(None, repo) as state:
            assert state.get_plan(plan_id) is not None  # stored, for the runs to execute

        waiting = _tick(sensor, first.cursor, instance)
        assert not waiting.run_requests and "waiting" in waiting.skip_reason.skip_message

        _complete_backfill(repo)
        promote = _tick(sensor, waiting.cursor, instance)
        assert list(_requests(promote)) == [("sparkmesh/promote_prod",)]
        assert _requests(promote)[("sparkmesh/promote_prod",)].tags["sparkmesh/plan_id"] == plan_id  # the same plan
        assert Cursor.parse(promote.cursor) == Cursor(head, "done", plan_id)

        again = _tick(sensor, promote.cursor, instance)
        assert isinstance(again, dg.SkipReason) and "no new commit" in again.skip_message


def test_second_commit_reloads_then_requests_only_the_changed_models(repo):
    sensor = _sensor(repo, reload=ReloadTarget("shop", port=1))  # nothing listens: the reload fails, not fatal
    with dg.instance_for_test() as instance:
        _complete_backfill(repo)
        first_head = _git(repo, "rev-parse", "HEAD")
        cursor = Cursor(first_head, "done").dump()

        daily = repo / "models" / "daily.sql"
        daily.write_text(daily.read_text().replace("COUNT(*) AS orders", "COUNT(DISTINCT id) AS orders"))
        _git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", "second")
        head = _git(repo, "rev-parse", "HEAD")

        reloading = _tick(sensor, cursor, instance)
        assert not reloading.run_requests
        assert Cursor.parse(reloading.cursor) == Cursor(head, "pending")

        planned = _tick(sensor, reloading.cursor, instance)
        requests = _requests(planned)
        assert set(requests) == {("shop/summary",), ("shop/daily", "shop/daily_flags")}
        assert all(request.run_key.startswith(head) for request in requests.values())


LANDED = '''
from dagster_sparkmesh import signal


@signal()
def landed(batch, before):
    from datetime import datetime
    limit = datetime.fromisoformat(before)
    return [(start, end) for start, end in batch if end.replace(tzinfo=None) <= limit]
'''


def test_signals_hold_back_ranges_until_ready(repo):
    """The sensor requests only what the models' signals report ready, and asks again as more becomes ready."""
    daily = repo / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("MODEL (", "MODEL (\n  signals [landed(before := '2024-01-03')],", 1))
    (repo / "signals").mkdir()
    (repo / "signals" / "landing.py").write_text(LANDED)
    assert load_project(repo, use_cache=False).models["shop.daily"].signals[0].name == "landed"
    sensor = _sensor(repo)
    with dg.instance_for_test() as instance:
        first = _tick(sensor, None, instance)
        daily_run = _requests(first)[("shop/daily", "shop/daily_flags")]
        assert (daily_run.tags[RANGE_START], daily_run.tags[RANGE_END]) == ("2024-01-01", "2024-01-02")
        waiting = _tick(sensor, first.cursor, instance)
        assert _requests(waiting)[("shop/daily", "shop/daily_flags")].run_key == daily_run.run_key  # Dagster dedupes
