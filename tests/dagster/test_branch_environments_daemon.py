"""Branch environments through a real ``dagster-daemon``: two branches planned and backfilled at once, each
environment against a fresh build of its branch, prod untouched, the table diff on the asset, then a merge that
promotes prod with no model run at all, and the merged branch's environment removed by the janitor job.

The test shop lives in a git repository served by a code location with the git sensor (prod, no approval) and the
branch sensor running; their runs are processes of their own sharing the project's managed Spark Connect server.
Branch commits are made in worktrees, so the served checkout stays on main until the merge.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

sys.path.insert(0, str(Path(__file__).parent / "ui"))

from shop_daemon import SHOP, Daemon, daemon_workspace, git, shop_repository, stop_spark  # noqa: E402

from dagster_sparkmesh.plan.branch_names import environment_for_branch  # noqa: E402
from dagster_sparkmesh.state.store import open_state_store  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TABLES = ("raw.events", "shop.daily", "shop.daily_flags", "shop.summary")
BIGGER, FLAGS = "feature/bigger-amounts", "fix-flags"
BRANCH_ASSET = dg.AssetKey(["sparkmesh", "branch_environments"])
PROMOTE = dg.AssetKey(["sparkmesh", "promote_prod"])
WAIT = 480.0  # a busy 2-core machine: the Connect server's start, several run processes at once
DEFINITIONS = '''
import os

import dagster as dg

from dagster_sparkmesh.dagster import BranchEnvironments, SparkMeshResource, build_sparkmesh_definitions

project = os.environ["SPARKMESH_LOOP_PROJECT"]
running = dg.DefaultSensorStatus.RUNNING
defs = build_sparkmesh_definitions(
    project,
    resource=SparkMeshResource(project_dir=project),
    sensor_status=running,
    sensor_interval_seconds=3,
    approval="none",
    git_link=None,
    branches=BranchEnvironments(prod_branch="main", sensor_status=running, interval_seconds=3),
)
'''


def _sparkmesh(project: Path, *args: str) -> str:
    done = subprocess.run([str(Path(sys.executable).parent / "sparkmesh"), "-p", str(project), *args],
                          capture_output=True, text=True, timeout=WAIT, check=False)
    assert done.returncode == 0, f"sparkmesh {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout


def _rows(project: Path, relations: dict[str, str]) -> dict[str, list[str]]:
    """Each model's rows as JSON, sorted; ``relations``: model → the view or table to read it from."""
    query = " UNION ALL ".join(f"SELECT '{m}' AS t, to_json(struct(*)) AS r FROM {r}" for m, r in relations.items())
    found: dict[str, list[str]] = {model: [] for model in relations}
    for row in json.loads(_sparkmesh(project, "fetchdf", "--json", query)):
        found[row["t"]].append(row["r"])
    return {model: sorted(rows) for model, rows in found.items()}


def _fresh_build(files: Path, target: Path, models: tuple[str, ...]) -> dict[str, list[str]]:
    """The oracle: the same files planned into prod from nothing, in a local Spark and state store of their own."""
    shutil.copytree(files, target, ignore=shutil.ignore_patterns(".sparkmesh", ".git"))
    (target / "config.yaml").write_text((SHOP / "config.yaml").read_text())
    _sparkmesh(target, "plan", "prod", "--auto-apply")
    return _rows(target, {model: model for model in models})


def _env_views(environment: str, models: tuple[str, ...]) -> dict[str, str]:
    return {model: f"{model.split('.')[0]}__{environment}.{model.split('.')[1]}" for model in models}


def _branch(repo: Path, branch: str, file: str, old: str, new: str) -> tuple[Path, str]:
    worktree = repo.parent / f"wt_{environment_for_branch(branch)}"
    git(repo, "worktree", "add", "-q", "-b", branch, str(worktree))
    path = worktree / file
    path.write_text(path.read_text().replace(old, new))
    git(worktree, "commit", "-qam", f"change {file}")
    return worktree, git(worktree, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path) -> Iterator[Path]:
    target = shop_repository(tmp_path / "shop")
    yield target
    stop_spark(target)


@pytest.fixture
def workspace(tmp_path, repo, monkeypatch) -> Path:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.setenv("SPARKMESH_LOOP_PROJECT", str(repo))
    return daemon_workspace(tmp_path, DEFINITIONS, "branches")


def _runs(instance: dg.DagsterInstance, **tags: str) -> list[dg.DagsterRun]:
    return list(instance.get_runs(filters=dg.RunsFilter(tags=tags)))


def _succeeded(instance: dg.DagsterInstance, **tags: str) -> bool:
    runs = _runs(instance, **tags)
    failed = [r.run_id for r in runs if r.status in (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED)]
    assert not failed, f"runs failed: {failed} ({tags})"
    return bool(runs) and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)


def _overlapped(instance: dg.DagsterInstance, runs: list[dg.DagsterRun]) -> bool:
    records = [instance.get_run_record_by_id(run.run_id) for run in runs]
    spans = [(r.start_time, r.end_time) for r in records]
    return all(start is not None for start, _ in spans) and max(s for s, _ in spans) < min(e for _, e in spans)


def test_branches_build_their_own_environments_and_a_merge_promotes_prod_without_recompute(repo, workspace, tmp_path):
    _sparkmesh(repo, "plan", "prod", "--auto-apply")  # prod as main builds it
    prod_before = _rows(repo, {model: model for model in TABLES})
    bigger_files, bigger = _branch(repo, BIGGER, "models/events.sql", "i.id * 10 AS amount", "i.id * 100 AS amount")
    flags_files, flags = _branch(repo, FLAGS, "models/daily_flags.sql", "total > 50 AS big", "total > 100 AS big")
    bigger_env, flags_env = environment_for_branch(BIGGER), environment_for_branch(FLAGS)
    instance = dg.DagsterInstance.get()

    daemon = Daemon(workspace)
    try:
        daemon.wait("both branch environments", timeout=WAIT, done=lambda: all(
            _succeeded(instance, **{"sparkmesh/commit": commit}) for commit in (bigger, flags)))
        branch_runs = [*_runs(instance, **{"sparkmesh/commit": bigger}), *_runs(instance, **{"sparkmesh/commit": flags})]
        overlapped = _overlapped(instance, branch_runs)

        # Each environment serves its branch: the models it changed, against a fresh build of the branch's files.
        assert _rows(repo, _env_views(bigger_env, TABLES)) == _fresh_build(bigger_files, tmp_path / "fresh_a", TABLES)
        flags_model = ("shop.daily_flags",)
        assert _rows(repo, _env_views(flags_env, flags_model)) == _fresh_build(flags_files, tmp_path / "fresh_b", flags_model)
        assert _rows(repo, {model: model for model in TABLES}) == prod_before  # prod untouched
        assert instance.get_latest_materialization_event(dg.AssetKey(["shop", "daily"])) is None

        diff = _metadata(instance, flags_env)["table_diff"].value
        assert "| `big` | total | 5 | 0 |" in diff
        assert "| rows | 5 | 5 |" in _metadata(instance, bigger_env)["table_diff"].value

        git(repo, "merge", "-q", "--no-ff", "-m", "merge fix-flags", FLAGS)
        merge = git(repo, "rev-parse", "HEAD")
        daemon.wait("prod promoted from the merge", lambda: _succeeded(instance, **{"sparkmesh/commit": merge}), WAIT)
        merge_runs = _runs(instance, **{"sparkmesh/commit": merge})
        assert [run.asset_selection for run in merge_runs] == [{PROMOTE}]  # no model computed: views swapped only
        planned = [o.metadata for o in _observations(instance) if o.metadata["commit"].value == merge]
        assert planned and planned[0]["intervals_to_compute"].value == 0
        daemon.wait("the merged branch's environment removed", lambda: _janitor_done(instance), WAIT)
        assert flags_env not in instance.get_dynamic_partitions("sparkmesh_prod_branches")
        with open_state_store(None, repo) as state:
            assert state.get_environment(flags_env) is None and state.get_environment(bigger_env) is not None
        assert bigger_env in instance.get_dynamic_partitions("sparkmesh_prod_branches")
    finally:
        daemon.stop()
    fresh_merge = _fresh_build(repo, tmp_path / "fresh_merge", TABLES)
    assert _rows(repo, {model: model for model in TABLES}) == fresh_merge
    assert fresh_merge["shop.daily_flags"] != prod_before["shop.daily_flags"]
    assert overlapped, "the two branch runs did not run at the same time"


def _metadata(instance: dg.DagsterInstance, partition: str) -> dict:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=BRANCH_ASSET, asset_partitions=[partition]), limit=1
    ).records
    return records[0].asset_materialization.metadata


def _observations(instance: dg.DagsterInstance) -> list[dg.AssetObservation]:
    return [r.asset_observation for r in instance.fetch_observations(PROMOTE, limit=10).records if r.asset_observation]


def _janitor_done(instance: dg.DagsterInstance) -> bool:
    runs = list(instance.get_runs(filters=dg.RunsFilter(job_name="sparkmesh_prod_janitor")))
    return bool(runs) and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
