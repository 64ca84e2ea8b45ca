"""Scale-out: the example project on a Spark standalone cluster gives the same prod views as on local Spark, with the
project files untouched and only the engine settings (environment variables) changed. The example holds every kind of
work a cluster's executors do here (seeds, CSV tables the project reads, a Python model, incremental, unique-key,
FULL and VIEW models); ``bench/cluster_bench.py`` also runs a generated project, at full size.

The cluster is real: a master and two workers (1 core, 1 GB each) started from the installed pyspark on 127.0.0.1,
and a Spark Connect server whose master is that cluster. The cluster run's ``sparkmesh`` commands are child
processes told ``SPARKMESH_SPARK_MODE=connect`` and ``SPARKMESH_SPARK_REMOTE=sc://...``; the local run is the same
commands in this process on the suite's local session.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from dagster_sparkmesh.project.config import SparkConnection

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[1]
BENCH = TESTS.parent / "bench"
CONNECT_SERVER_NAME = "sparkmesh connect server"


def _load(name: str, path: Path):
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses resolve annotations through sys.modules
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCH))  # the bench script imports its sibling generate_project by name
    try:
        yield _load("bench_cluster_bench", BENCH / "cluster_bench.py")
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def cluster_server(tmp_path_factory):
    """The cluster and a Connect server on it; everything stopped by pid (server first, then workers, master)."""
    from dagster_sparkmesh.engine.connect_server import start_server, stop_server
    from dagster_sparkmesh.engine.session import close_sessions
    from dagster_sparkmesh.engine.standalone_cluster import free_port, standalone_cluster

    folder = tmp_path_factory.mktemp("standalone_cluster")
    server_folder = folder / "server"
    began = time.monotonic()
    with standalone_cluster(folder / "daemons", workers=2, cores_per_worker=1, memory_per_worker="1g") as cluster:
        print(f"standalone cluster up in {time.monotonic() - began:.1f} s")
        settings = {**cluster.application_settings(), "spark.sql.shuffle.partitions": "2"}
        connection = SparkConnection(mode="managed", master=cluster.master_url, connect_port=free_port(), config=settings)
        try:
            status = start_server(server_folder, connection)
            print(f"Connect server on the cluster up in {time.monotonic() - began:.1f} s (cluster included)")
            yield cluster, status.url
        finally:
            close_sessions(server_folder)
            stop_server(server_folder)


def _projects(tmp_path: Path, bench):
    return [bench.copy_example(tmp_path / run / "example", last_day="2024-01-03") for run in ("local", "cluster")]


def _timed(function, *args):
    began = time.monotonic()
    return function(*args), time.monotonic() - began


def _run_local(bench, project, engine) -> dict:
    """The commands in this process, on the suite's local session (injected: one JVM holds one local session)."""
    harness = _load("sparkmesh_harness", TESTS / "cli" / "sparkmesh_harness.py")
    for args in [*bench.setup_commands(project), bench.plan_command(project)]:
        result, _ = harness.invoke(project.folder, args, engine)
        assert result.exit_code == 0, result.output
    return bench.prod_view_checksums(engine, project.folder)


def _run_on_cluster(bench, project, url: str) -> dict:
    from dagster_sparkmesh.engine.adapter import SparkEngine
    from dagster_sparkmesh.engine.session import close_sessions, open_session

    env = {"SPARKMESH_SPARK_MODE": "connect", "SPARKMESH_SPARK_REMOTE": url}
    seconds = [bench.run_sparkmesh(project.folder, args, env)
               for args in [*bench.setup_commands(project), bench.plan_command(project)]]
    print("cluster commands (s):", [round(value, 1) for value in seconds])
    try:
        remote = SparkEngine(open_session(SparkConnection(mode="connect", remote=url), project.folder))
        return bench.prod_view_checksums(remote, project.folder)
    finally:
        close_sessions(project.folder)


def test_cluster_run_gives_the_local_results(tmp_path, bench, cluster_server, engine, clean_catalog):
    cluster, url = cluster_server
    local_copy, cluster_copy = _projects(tmp_path, bench)
    tasks_before = cluster.finished_tasks_per_worker()

    # The two runs share nothing (own catalogs, own state stores): side by side, the test takes the longer one.
    with ThreadPoolExecutor(max_workers=1) as pool:
        local_run = pool.submit(_timed, _run_local, bench, local_copy, engine)
        on_cluster, cluster_seconds = _timed(_run_on_cluster, bench, cluster_copy, url)
        local, local_seconds = local_run.result()
    print(f"example: local {local_seconds:.1f} s, cluster {cluster_seconds:.1f} s")

    assert len(local) == 15 and all(value is not None for value in local.values()), local  # every prod view
    assert sum(count for count, _ in local.values()) > 0
    assert local["shop.daily_revenue"][0] == 3  # January 1-3
    assert on_cluster == local
    # The work ran on the workers' executors: the server holds one core of each worker, and both finished tasks.
    state = cluster.state()
    servers = [app for app in state.active_applications if app.name.startswith(CONNECT_SERVER_NAME)]
    assert [app.cores for app in servers] == [2]
    assert [worker.cores_used for worker in state.workers] == [1, 1]
    tasks_after = cluster.finished_tasks_per_worker()
    assert all(after > before for before, after in zip(tasks_before, tasks_after, strict=True)), (tasks_before, tasks_after)
