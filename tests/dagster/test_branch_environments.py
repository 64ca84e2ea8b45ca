"""Branch environments through Dagster: the branch sensor evaluated as the daemon evaluates it (``evaluate_tick``),
the runs it requests executed on a real instance with local Spark, prod's views, assets and state compared before
and after, a merge promoted from the branch's tables, and the clean-up of a merged and a deleted branch."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import dagster as dg
import pytest

pytest.importorskip("dagster_sparkmesh.engine.adapter")

from dagster_sparkmesh.clock import utc_now  # noqa: E402
from dagster_sparkmesh.dagster import (  # noqa: E402
    BranchEnvironments,
    SparkMeshResource,
    build_sparkmesh_definitions,
    sparkmesh_git_sensor,
)
from dagster_sparkmesh.dagster.sensor_planner import StatePlanner  # noqa: E402
from dagster_sparkmesh.execution.apply import apply_plan  # noqa: E402
from dagster_sparkmesh.plan.branch_names import environment_for_branch  # noqa: E402
from dagster_sparkmesh.plan.builder import build_plan  # noqa: E402
from dagster_sparkmesh.project.loader import load_project  # noqa: E402
from dagster_sparkmesh.state.store import open_state_store  # noqa: E402


PROJECT = Path(__file__).parent / "projects" / "shop"
BIGGER, FLAGS, FLAGS_TWIN = "feature/bigger-amounts", "fix-flags", "fix_flags_again"
BIGGER_ENV, FLAGS_ENV, TWIN_ENV = (environment_for_branch(b) for b in (BIGGER, FLAGS, FLAGS_TWIN))
BRANCH_ASSET = dg.AssetKey(["sparkmesh", "branch_environments"])


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": os.environ["PATH"]}
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env).stdout.strip()


def _branch(repo: Path, branch: str, file: str, old: str, new: str) -> str:
    """A commit on a new branch made in a worktree of its own: the checkout the code location serves stays as is."""
    worktree = repo.parent / f"wt_{environment_for_branch(branch)}"
    _git(repo, "worktree", "add", "-q", "-b", branch, str(worktree))
    path = worktree / file
    path.write_text(path.read_text().replace(old, new))
    _git(worktree, "commit", "-qam", f"change {file}")
    return _git(worktree, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path, clean_catalog) -> Path:
    target = tmp_path / "shop"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    (target / ".gitignore").write_text(".sparkmesh/\n")
    _git(target, "init", "-q", "-b", "main")
    _git(target, "add", ".")
    _git(target, "commit", "-qm", "first")
    return target


@pytest.fixture
def resource(spark, repo) -> SparkMeshResource:
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    return SparkMeshResource(project_dir=str(repo), spark_config={"spark.sql.warehouse.dir": warehouse})


def _apply_prod(resource: SparkMeshResource) -> dict:
    ctx = resource.open_context("prod")
    try:
        plan = build_plan(ctx.project, ctx.state, "prod", execution_time=ctx.clock())
        applied = apply_plan(ctx, plan)
        return {"plan": plan, "intervals": applied.intervals_processed}
    finally:
        ctx.close()


def _defs(repo: Path, resource: SparkMeshResource, settings: BranchEnvironments | None = None) -> dg.Definitions:
    defs = build_sparkmesh_definitions(repo, resource=resource, git_link=None, sensor=False, readers_sensor_status=None,
                                       automation_sensor_status=None, branches=settings or BranchEnvironments())
    dg.Definitions.validate_loadable(defs)  # what a code location checks as it loads
    return defs


def _tick(defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None):
    sensor = defs.resolve_sensor_def("sparkmesh_prod_branch_sensor")
    context = dg.build_sensor_context(cursor=cursor, instance=instance, instance_ref=instance.get_ref(), definitions=defs)
    result = sensor.evaluate_tick(context)
    for change in result.dynamic_partitions_requests or ():  # what the daemon does with them
        if isinstance(change, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(change.partitions_def_name, list(change.partition_keys))
        else:
            for key in change.partition_keys:
                instance.delete_dynamic_partition(change.partitions_def_name, key)
    return result


def _run(defs: dg.Definitions, instance: dg.DagsterInstance, request: dg.RunRequest) -> dg.ExecuteInProcessResult:
    job = defs.resolve_job_def(request.job_name)
    return job.execute_in_process(instance=instance, partition_key=request.partition_key, tags=request.tags,
                                  raise_on_error=False)


def _value(spark, sql: str):
    return spark.sql(sql).collect()[0][0]


def test_two_branches_get_environments_of_their_own_and_a_merge_promotes_prod_without_recompute(spark, repo, resource):
    _apply_prod(resource)
    prod_total = _value(spark, "SELECT SUM(total) FROM shop.daily")
    prod_big = _value(spark, "SELECT COUNT_IF(big) FROM shop.daily_flags")
    bigger = _branch(repo, BIGGER, "models/events.sql", "i.id * 10 AS amount", "i.id * 100 AS amount")
    flags = _branch(repo, FLAGS, "models/daily_flags.sql", "total > 50 AS big", "total > 100 AS big")
    defs = _defs(repo, resource)

    with dg.instance_for_test() as instance:
        first = _tick(defs, instance, None)
        requests = {request.partition_key: request for request in first.run_requests}
        assert set(requests) == {BIGGER_ENV, FLAGS_ENV}
        assert requests[BIGGER_ENV].tags["sparkmesh/commit"] == bigger
        assert requests[FLAGS_ENV].tags["sparkmesh/branch"] == FLAGS and requests[FLAGS_ENV].tags["sparkmesh/commit"] == flags
        assert set(instance.get_dynamic_partitions("sparkmesh_prod_branches")) == {BIGGER_ENV, FLAGS_ENV}
        assert not _tick(defs, instance, first.cursor).run_requests  # nothing new: nothing requested

        for env in (BIGGER_ENV, FLAGS_ENV):
            assert _run(defs, instance, requests[env]).success

        # Each environment serves its branch; prod still serves main.
        assert _value(spark, f"SELECT SUM(total) FROM shop__{BIGGER_ENV}.daily") == 10 * prod_total
        assert _value(spark, "SELECT SUM(total) FROM shop.daily") == prod_total
        assert _value(spark, f"SELECT COUNT_IF(big) FROM shop__{FLAGS_ENV}.daily_flags") == 0
        assert _value(spark, "SELECT COUNT_IF(big) FROM shop.daily_flags") == prod_big == 5

        # The branch's runs materialized only their partition of the branch asset, never prod's model assets.
        assert instance.get_latest_materialization_event(dg.AssetKey(["shop", "daily"])) is None
        materialized = instance.get_latest_materialization_event(BRANCH_ASSET)
        assert materialized is not None
        flags_event = _materialization(instance, FLAGS_ENV)
        metadata = flags_event.metadata
        assert metadata["changed_models"].value == ["shop.daily_flags"]
        assert metadata["intervals_computed"].value == 5  # daily_flags' five days, nothing of prod's models
        diff = metadata["table_diff"].value
        assert "`shop.daily_flags`" in diff and "| `big` | total | 5 | 0 |" in diff
        bigger_build = _materialization(instance, BIGGER_ENV).metadata
        assert "| `shop.daily` | not_null | passed | blocking |" in bigger_build["audits"].value  # its audit ran
        bigger_diff = bigger_build["table_diff"].value
        assert "only in prod" in bigger_diff and "| `total` |" in bigger_diff  # daily has a grain: rows joined on ds

        # The same change on another branch is the same version: its environment computes nothing.
        _branch(repo, FLAGS_TWIN, "models/daily_flags.sql", "total > 50 AS big", "total > 100 AS big")
        twin = _tick(defs, instance, first.cursor)
        assert [request.partition_key for request in twin.run_requests] == [TWIN_ENV]
        assert _run(defs, instance, twin.run_requests[0]).success
        assert _materialization(instance, TWIN_ENV).metadata["intervals_computed"].value == 0
        assert _value(spark, f"SELECT COUNT_IF(big) FROM shop__{TWIN_ENV}.daily_flags") == 0

        # An idle branch's environment does not expire while the branch lives: each tick keeps it.
        _expire_soon(repo, FLAGS_ENV)
        _tick(defs, instance, twin.cursor)
        with open_state_store(None, repo) as state:
            assert state.get_environment(FLAGS_ENV).expires_at > utc_now() + timedelta(days=6)  # environment_ttl: a week

        # Merging fix-flags: prod's plan, awaiting approval, shows the branch's table diff; it finds the branch's
        # versions built and only swaps views.
        _git(repo, "merge", "-q", "--no-ff", "-m", "merge fix-flags", FLAGS)
        review = _git_sensor_observation(repo, instance)
        assert review["merged_branch"].value == FLAGS and review["merged_branch_environment"].value == FLAGS_ENV
        assert "| `big` | total | 5 | 0 |" in review["merged_branch_table_diff"].value
        assert review["intervals_to_compute"].value == 0
        merged = _apply_prod(resource)
        assert merged["plan"].directly_modified == ("shop.daily_flags",)
        assert merged["plan"].missing_intervals == {} and merged["intervals"] == 0
        assert _value(spark, "SELECT COUNT_IF(big) FROM shop.daily_flags") == 0

        # The merged branch and deleted ones lose their partitions; their environments expire; the janitor runs.
        for branch in (BIGGER, FLAGS_TWIN):
            _git(repo, "worktree", "remove", "--force", str(repo.parent / f"wt_{environment_for_branch(branch)}"))
            _git(repo, "branch", "-D", branch)
        after = _tick(defs, instance, first.cursor)
        assert not instance.get_dynamic_partitions("sparkmesh_prod_branches")
        janitor = [r for r in after.run_requests if r.job_name == "sparkmesh_prod_janitor"]
        assert len(janitor) == 1 and len(after.run_requests) == 1
        assert _run(defs, instance, janitor[0]).success
        with open_state_store(None, repo) as state:
            assert state.get_environment(FLAGS_ENV) is None and state.get_environment(BIGGER_ENV) is None
        databases = {row[0] for row in spark.sql("SHOW DATABASES").collect()}
        assert f"shop__{FLAGS_ENV}" not in databases or not spark.sql(f"SHOW VIEWS IN shop__{FLAGS_ENV}").collect()
        assert _value(spark, "SELECT COUNT_IF(big) FROM shop.daily_flags") == 0  # prod serves the merge

        # A branch re-created at the commit it had is built again (a new generation of its environment).
        _git(repo, "branch", BIGGER, bigger)
        again = _tick(defs, instance, after.cursor)
        assert [(r.partition_key, r.tags["sparkmesh/commit"]) for r in again.run_requests] == [(BIGGER_ENV, bigger)]
        assert again.run_requests[0].run_key != requests[BIGGER_ENV].run_key


def _expire_soon(repo: Path, environment: str) -> None:
    """The environment as an idle branch leaves it: its expiry an hour away (as a week without commits would)."""
    import sqlalchemy as sa

    from dagster_sparkmesh.state import environments
    from dagster_sparkmesh.state.connection import write_transaction

    with open_state_store(None, repo) as state, write_transaction(state.engine) as connection:
        idle = environments.get(connection, environment).model_copy(update={"expires_at": utc_now() + timedelta(hours=1)})
        connection.execute(sa.update(environments.table).where(environments.table.c.name == environment)
                           .values(**environments._row(idle)))
    with open_state_store(None, repo) as state:
        assert state.get_environment(environment).expires_at < utc_now() + timedelta(hours=2)


def _git_sensor_observation(repo: Path, instance: dg.DagsterInstance) -> dict:
    """Prod's git sensor (approval on, as prod has it by default) after the merge: its plan observation."""
    sensor = sparkmesh_git_sensor(project_dir=repo, environment="prod", approval="promotion",
                                  load_project=lambda: load_project(repo, use_cache=False),
                                  planner=StatePlanner("prod", None))
    defs = build_sparkmesh_definitions(repo, sensor=False, git_link=None, automation_sensor_status=None,
                                       readers_sensor_status=None)
    context = dg.build_sensor_context(instance=instance, definitions=dg.Definitions.merge(defs, dg.Definitions(sensors=[sensor])))
    tick = sensor.evaluate_tick(context)
    observations = [event.metadata for event in tick.asset_events if isinstance(event, dg.AssetObservation)]
    awaiting = [o for o in observations if o["status"].value.startswith("backfilled; awaiting approval")]
    assert awaiting, (tick.skip_message, observations)
    return awaiting[0]


def _materialization(instance: dg.DagsterInstance, partition: str) -> dg.AssetMaterialization:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=BRANCH_ASSET, asset_partitions=[partition]), limit=1
    ).records
    return records[0].asset_materialization


def test_a_branch_head_is_read_from_git_without_touching_the_working_tree(repo):
    from dagster_sparkmesh.project.commit_trees import branch_heads, export_project, forget_exports

    commit = _branch(repo, BIGGER, "models/events.sql", "i.id * 10 AS amount", "i.id * 100 AS amount")
    (repo / "models" / "events.sql").write_text((repo / "models" / "events.sql").read_text() + "\n-- uncommitted\n")
    heads = branch_heads(repo, ["*"], ["main"])
    assert [(h.name, h.commit) for h in heads] == [(BIGGER, commit)]
    exported = export_project(repo, commit)
    assert "i.id * 100" in (exported / "models" / "events.sql").read_text()
    assert "i.id * 10 AS" in (repo / "models" / "events.sql").read_text()
    assert _git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    project = load_project(exported)
    assert "shop.daily" in project.models
    assert forget_exports(repo, keep=[]) == [] and exported.is_dir()  # a run may still read a fresh export
    assert forget_exports(repo, keep=[commit], older_than_seconds=0) == [] and exported.is_dir()
    assert forget_exports(repo, keep=[], older_than_seconds=0) == [commit] and not exported.exists()


def _failure(result: dg.ExecuteInProcessResult) -> str:
    failures = [event for event in result.all_events if event.is_step_failure]
    assert not result.success and failures
    return failures[0].step_failure_data.error.message


def test_a_branch_run_uses_the_checkouts_state_store_and_refuses_what_is_no_branch(spark, repo, resource):
    config = repo / "config.yaml"  # a relative SQLite path: in an export it would resolve to a store without prod
    config.write_text(config.read_text() + "state_connection:\n  type: sqlite\n  database: team_state.db\n")
    _git(repo, "commit", "-qam", "a team state store")
    _apply_prod(resource)
    commit = _branch(repo, FLAGS, "models/daily_flags.sql", "total > 50 AS big", "total > 100 AS big")
    defs = _defs(repo, resource)
    with dg.instance_for_test() as instance:
        request = _tick(defs, instance, None).run_requests[0]
        assert _run(defs, instance, request).success
        assert _materialization(instance, FLAGS_ENV).metadata["intervals_computed"].value == 5
        assert not (repo / ".sparkmesh" / "commits" / commit / "team_state.db").exists()
        with open_state_store(f"sqlite:///{repo / 'team_state.db'}", repo) as state:
            assert state.get_environment(FLAGS_ENV) is not None and state.get_environment("prod") is not None

        forged = dg.RunRequest(partition_key=FLAGS_ENV, job_name=request.job_name,
                               tags={**request.tags, "sparkmesh/commit": "0" * 40})
        assert "does not match the partition" in _failure(_run(defs, instance, forged))
        instance.add_dynamic_partitions("sparkmesh_prod_branches", ["prod"])
        by_hand = dg.RunRequest(partition_key="prod", job_name=request.job_name)
        assert "prod is not a branch environment" in _failure(_run(defs, instance, by_hand))
        assert _value(spark, "SELECT COUNT_IF(big) FROM shop.daily_flags") == 5  # prod as main built it


def test_a_preview_window_builds_and_compares_the_branch_over_that_window(spark, repo, resource):
    _apply_prod(resource)
    _branch(repo, FLAGS, "models/daily_flags.sql", "total > 50 AS big", "total > 100 AS big")
    defs = _defs(repo, resource, BranchEnvironments(preview_start="2024-01-04"))
    with dg.instance_for_test() as instance:
        assert _run(defs, instance, _tick(defs, instance, None).run_requests[0]).success
        metadata = _materialization(instance, FLAGS_ENV).metadata
        assert metadata["intervals_computed"].value == 2  # 2024-01-04 and 2024-01-05
        diff = metadata["table_diff"].value
        assert "| rows | 2 | 2 |" in diff and "| `big` | total | 2 | 0 |" in diff  # prod over the same two days
        assert _value(spark, f"SELECT COUNT(*) FROM shop__{FLAGS_ENV}.daily_flags") == 2


def _queue(defs: dg.Definitions, instance: dg.DagsterInstance, request: dg.RunRequest) -> dg.DagsterRun:
    """The requested run as the daemon leaves it before a worker picks it up: recorded, not started."""
    job = defs.resolve_job_def(request.job_name)
    return instance.create_run_for_job(job_def=job, tags={**request.tags, "dagster/partition": request.partition_key})


def test_one_run_per_branch_environment_at_a_time(spark, repo, resource):
    """A newer head, or the branch's deletion, waits while the environment's run is queued or running: an older
    commit's run promoting after the newer one's, or re-creating an environment just removed, would leave the
    environment at the wrong commit."""
    first = _branch(repo, FLAGS, "models/daily_flags.sql", "total > 50 AS big", "total > 100 AS big")
    worktree = repo.parent / f"wt_{FLAGS_ENV}"
    defs = _defs(repo, resource)
    with dg.instance_for_test() as instance:
        start = _tick(defs, instance, None)
        in_flight = _queue(defs, instance, start.run_requests[0])
        path = worktree / "models" / "daily_flags.sql"
        path.write_text(path.read_text().replace("total > 100 AS big", "total > 200 AS big"))
        _git(worktree, "commit", "-qam", "higher")
        second = _git(worktree, "rev-parse", "HEAD")

        held = _tick(defs, instance, start.cursor)
        assert not held.run_requests and f"waiting for a run to finish before changing: {FLAGS_ENV}" in held.skip_message
        instance.report_run_canceled(in_flight)
        moved = _tick(defs, instance, held.cursor)
        assert [(r.partition_key, r.tags["sparkmesh/commit"]) for r in moved.run_requests] == [(FLAGS_ENV, second)]
        assert first != second

        # A person's run of the partition from the UI (no sensor tags) holds the environment the same way.
        by_hand = dg.RunRequest(partition_key=FLAGS_ENV, job_name=moved.run_requests[0].job_name)
        in_flight = _queue(defs, instance, by_hand)
        assert "sparkmesh/environment" not in in_flight.tags
        _git(repo, "worktree", "remove", "--force", str(worktree))
        _git(repo, "branch", "-D", FLAGS)
        kept = _tick(defs, instance, moved.cursor)
        assert not kept.run_requests and instance.get_dynamic_partitions("sparkmesh_prod_branches") == [FLAGS_ENV]
        instance.report_run_canceled(in_flight)
        removed = _tick(defs, instance, kept.cursor)
        assert not removed.run_requests  # no run made the environment here: the janitor has nothing to drop
        assert instance.get_dynamic_partitions("sparkmesh_prod_branches") == []


@pytest.mark.parametrize("prod_moved_on", [False, True], ids=["branch up to date", "branch behind prod"])
def test_a_squash_merge_shows_the_branch_table_diff_on_prods_plan(spark, repo, resource, prod_moved_on):
    """A squash merge has one parent: the merged branch is the build whose commit has the merge's very files, or,
    when prod moved on after the branch left it, the branch whose changes the squash brings."""
    _apply_prod(resource)
    _branch(repo, FLAGS, "models/daily_flags.sql", "total > 50 AS big", "total > 100 AS big")
    defs = _defs(repo, resource)
    with dg.instance_for_test() as instance:
        assert _run(defs, instance, _tick(defs, instance, None).run_requests[0]).success
        if prod_moved_on:
            (repo / "NOTES.md").write_text("a change on prod after the branch left it\n")
            _git(repo, "add", "NOTES.md")
            _git(repo, "commit", "-qm", "notes")
        _git(repo, "merge", "-q", "--squash", FLAGS)
        _git(repo, "commit", "-qm", "fix flags (squashed)")
        assert len(_git(repo, "rev-list", "--parents", "-n", "1", "HEAD").split()) == 2  # one parent
        review = _git_sensor_observation(repo, instance)
        assert review["merged_branch"].value == FLAGS and review["merged_branch_environment"].value == FLAGS_ENV
        assert "| `big` | total | 5 | 0 |" in review["merged_branch_table_diff"].value
        assert review["intervals_to_compute"].value == 0
