"""The git sensor on a temporary repository with two commits: plan, ranged runs, promotion, once per commit."""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import dagster as dg
import pytest

from dagster._core.definitions.sensor_definition import SensorExecutionData

from dagster_sparkmesh.dagster import ReloadTarget, build_sparkmesh_definitions, sparkmesh_git_sensor
from dagster_sparkmesh.dagster.sensor import Cursor, StatePlanner
from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.plan.stored import decode
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


def _sensor(repo: Path, reload: ReloadTarget | None = None, approval: str = "none") -> tuple[dg.SensorDefinition, dg.Definitions]:
    """The git sensor beside the project's assets, as a code location holds them: Dagster resolves each run request
    against the sensor's target and the code location's asset graph."""
    sensor = sparkmesh_git_sensor(
        project_dir=repo,
        environment="prod",
        load_project=lambda: load_project(repo, use_cache=False),
        planner=StatePlanner("prod", None, clock=lambda: NOW),
        reload=reload,
        approval=approval,
    )
    assets = build_sparkmesh_definitions(repo, sensor=False, git_link=None, automation_sensor_status=None)
    return sensor, dg.Definitions.merge(assets, dg.Definitions(sensors=[sensor]))


def _tick(sensor_and_defs, cursor: str | None, instance) -> SensorExecutionData:
    """One evaluation as Dagster's daemon makes it (``evaluate_tick``: run requests resolved against the target)."""
    sensor, defs = sensor_and_defs
    return sensor.evaluate_tick(dg.build_sensor_context(cursor=cursor, instance=instance, definitions=defs))


def _requests(result: SensorExecutionData) -> dict[tuple[str, ...], dg.RunRequest]:
    return {
        tuple(sorted(key.to_user_string() for key in request.asset_selection)): request
        for request in result.run_requests or []
    }


def _observations(result: SensorExecutionData) -> list[dg.AssetObservation]:
    return [event for event in result.asset_events if isinstance(event, dg.AssetObservation)]


def _complete_backfill(repo: Path, only: set[str] | None = None) -> None:
    """What the requested runs would do to the state: push the snapshots and record the missing intervals (of the
    models ``only`` names, or all)."""
    project = load_project(repo, use_cache=False)
    plan = _plan(project)
    with open_state_store(None, repo) as state:
        state.push_snapshots(plan.new_snapshots)
        for name, intervals in plan.missing_intervals.items():
            if only is None or name in only:
                state.add_intervals(name, plan.version_of(name), list(intervals))


def test_new_commit_requests_ranged_runs_then_promotion_then_nothing(repo):
    sensor = _sensor(repo)
    head = _git(repo, "rev-parse", "HEAD")
    with dg.instance_for_test() as instance:
        first = _tick(sensor, None, instance)
        # Runs across groups start once their parents exist: raw.events first, then the daily models, then summary.
        assert list(_requests(first)) == [("raw/events",)]
        assert RANGE_START not in _requests(first)[("raw/events",)].tags
        plan_id = _requests(first)[("raw/events",)].tags["sparkmesh/plan_id"]
        assert Cursor.parse(first.cursor) == Cursor(head, "backfilling", plan_id)
        with open_state_store(None, repo) as state:
            assert state.get_plan(plan_id) is not None  # stored, for the runs to execute
        [shown] = _observations(first)  # the plan, on the promotion asset's page, before anything runs
        assert shown.asset_key == dg.AssetKey(["sparkmesh", "promote_prod"])
        assert shown.metadata["plan_id"].value == plan_id and shown.metadata["status"].value == "backfilling"
        assert "| `shop.daily` | 5 | 2024-01-01 → 2024-01-06 |" in shown.metadata["plan"].value

        waiting = _tick(sensor, first.cursor, instance)
        assert list(_requests(waiting)) == [("raw/events",)]  # the same run key: Dagster launches it once

        _complete_backfill(repo, only={"raw.events"})
        second = _tick(sensor, waiting.cursor, instance)
        daily = _requests(second)[("shop/daily", "shop/daily_flags")]
        assert list(_requests(second)) == [("shop/daily", "shop/daily_flags")]
        assert (daily.tags[RANGE_START], daily.tags[RANGE_END]) == ("2024-01-01", "2024-01-05")
        assert all(r.job_name == "__ASSET_JOB" for r in second.run_requests)  # resolved as the daemon does
        assert daily.run_key.startswith(head) and daily.tags["sparkmesh/commit"] == head
        assert "shop.daily" in daily.tags["sparkmesh/plan"] and daily.tags["sparkmesh/plan_id"] == plan_id

        _complete_backfill(repo, only={"raw.events", "shop.daily", "shop.daily_flags"})
        third = _tick(sensor, second.cursor, instance)
        assert list(_requests(third)) == [("shop/summary",)]

        _complete_backfill(repo)
        promote = _tick(sensor, third.cursor, instance)
        assert list(_requests(promote)) == [("sparkmesh/promote_prod",)]
        assert _requests(promote)[("sparkmesh/promote_prod",)].tags["sparkmesh/plan_id"] == plan_id  # the same plan
        assert Cursor.parse(promote.cursor) == Cursor(head, "done", plan_id)

        again = _tick(sensor, promote.cursor, instance)
        assert not again.run_requests and "no new commit" in again.skip_message


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
        assert not reloading.run_requests  # the loaded code is the old commit's: runs wait for the reload
        plan_id = Cursor.parse(reloading.cursor).plan_id
        assert Cursor.parse(reloading.cursor) == Cursor(head, "backfilling", plan_id)
        [shown] = _observations(reloading)  # the plan shows at once, in the tick that asks for the reload
        assert shown.metadata["commit"].value == head and "shop.daily" in shown.metadata["plan"].value

        planned = _tick(sensor, reloading.cursor, instance)
        requests = _requests(planned)
        assert set(requests) == {("shop/daily", "shop/daily_flags")}  # shop.summary (FULL) once they are done
        assert all(request.run_key.startswith(head) for request in requests.values())
        assert all(request.tags["sparkmesh/plan_id"] == plan_id for request in requests.values())  # the plan shown


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
        _complete_backfill(repo, only={"raw.events"})
        first = _tick(sensor, None, instance)
        daily_run = _requests(first)[("shop/daily", "shop/daily_flags")]
        assert (daily_run.tags[RANGE_START], daily_run.tags[RANGE_END]) == ("2024-01-01", "2024-01-02")
        waiting = _tick(sensor, first.cursor, instance)
        assert _requests(waiting)[("shop/daily", "shop/daily_flags")].run_key == daily_run.run_key  # Dagster dedupes


def _promote_in_state(repo: Path, plan_id: str) -> None:
    """What a person's materialization of the promotion asset records: the environment now serves the plan."""
    with open_state_store(None, repo) as state:
        plan = decode(state.get_plan(plan_id).plan_json)
        state.promote_environment(plan.environment_after, None)


def test_prod_waits_for_approval_after_the_backfill_then_a_newer_commit_supersedes(repo):
    sensor = _sensor(repo, approval="promotion")
    with dg.instance_for_test() as instance:
        first = _tick(sensor, None, instance)
        plan_id = Cursor.parse(first.cursor).plan_id
        _complete_backfill(repo)
        waiting = _tick(sensor, first.cursor, instance)
        assert not waiting.run_requests  # no promotion: prod's views wait for a person
        assert "awaits approval" in waiting.skip_message
        assert Cursor.parse(waiting.cursor).phase == "awaiting_promotion"
        [ready] = _observations(waiting)
        assert ready.metadata["status"].value.startswith("backfilled; awaiting approval: materialize sparkmesh/promote_prod")
        still = _tick(sensor, waiting.cursor, instance)
        assert not still.run_requests and Cursor.parse(still.cursor).phase == "awaiting_promotion"

        _promote_in_state(repo, plan_id)
        approved = _tick(sensor, still.cursor, instance)
        assert Cursor.parse(approved.cursor) == Cursor(Cursor.parse(first.cursor).commit, "done", plan_id)

        daily = repo / "models" / "daily.sql"
        daily.write_text(daily.read_text().replace("COUNT(*) AS orders", "COUNT(DISTINCT id) AS orders"))
        _git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", "second")
        second = _tick(sensor, approved.cursor, instance)
        assert set(_requests(second)) == {("shop/daily", "shop/daily_flags")}  # summary once they are done
        [shown] = _observations(second)
        assert "**Directly modified** `shop.daily` (breaking)" in shown.metadata["plan"].value
        assert "COUNT(DISTINCT id) AS orders" in shown.metadata["plan"].value


def test_backfill_approval_shows_the_cost_and_requests_nothing(repo):
    sensor = _sensor(repo, approval="backfill")
    with dg.instance_for_test() as instance:
        first = _tick(sensor, None, instance)
        assert not first.run_requests and "awaiting approval of the backfill" in first.skip_message
        [shown] = _observations(first)
        assert shown.metadata["intervals_to_compute"].value == 20 and shown.metadata["models_to_compute"].value == 4
        _complete_backfill(repo)  # a person's runs of the missing partitions are the approval
        after = _tick(sensor, first.cursor, instance)
        assert Cursor.parse(after.cursor).phase == "awaiting_promotion"


def test_a_commit_that_does_not_load_is_reported_in_the_tick_and_plans_nothing(repo):
    sensor = _sensor(repo)
    daily = repo / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("COUNT(*) AS orders", "COUNT(* AS orders"))
    _git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", "broken")
    with dg.instance_for_test() as instance:
        broken = _tick(sensor, None, instance)
    assert not broken.run_requests and broken.cursor is None
    assert "does not load, nothing planned" in broken.skip_message and "daily.sql:" in broken.skip_message
    assert "Traceback" not in broken.skip_message


def test_models_a_running_run_of_the_commit_computes_are_not_requested_again(repo):
    sensor = _sensor(repo)
    head = _git(repo, "rev-parse", "HEAD")
    with dg.instance_for_test() as instance:
        first = _tick(sensor, None, instance)
        assert list(_requests(first)) == [("raw/events",)]
        running = dg.DagsterRun(
            job_name="__ASSET_JOB", run_id="a" * 36, status=dg.DagsterRunStatus.STARTED,
            tags={"sparkmesh/commit": head}, asset_selection=frozenset({dg.AssetKey(["raw", "events"])}),
        )
        instance.add_run(running)
        meanwhile = _tick(sensor, first.cursor, instance)
        assert not meanwhile.run_requests and "waiting for backfill runs: raw.events" in meanwhile.skip_message


def test_a_failed_backfill_run_is_named_for_a_person_to_re_execute(repo):
    sensor = _sensor(repo)
    head = _git(repo, "rev-parse", "HEAD")
    with dg.instance_for_test() as instance:
        first = _tick(sensor, None, instance)
        request = _requests(first)[("raw/events",)]
        failed = dg.DagsterRun(
            job_name="__ASSET_JOB", run_id="f" * 36, status=dg.DagsterRunStatus.FAILURE,
            tags={**request.tags, "dagster/run_key": request.run_key},
            asset_selection=frozenset({dg.AssetKey(["raw", "events"])}),
        )
        instance.add_run(failed)
        after = _tick(sensor, first.cursor, instance)
        assert not after.run_requests
        assert after.skip_message.startswith("run ffffffff (raw/events) failed: open it on the Runs page and Re-execute")
        assert Cursor.parse(after.cursor) == Cursor.parse(first.cursor)  # still backfilling the same plan

        _complete_backfill(repo, only={"raw.events"})  # what the re-execution computes
        resumed = _tick(sensor, after.cursor, instance)
        assert list(_requests(resumed)) == [("shop/daily", "shop/daily_flags")]
