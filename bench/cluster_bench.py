"""Local Spark vs a Spark standalone cluster: the same projects and commands, only the engine settings differ.

    python bench/cluster_bench.py [--models 30] [--days 90] [--keep DIR]

Starts a standalone cluster from the installed pyspark on 127.0.0.1 (a master and 2 workers of 1 core and 1 GB;
``dagster_sparkmesh/engine/standalone_cluster.py``). For the example project and a generated project
(``generate_project.py``), each in two fresh copies, runs the same ``sparkmesh`` commands in fresh processes, the
project files untouched, only environment variables telling them where Spark is:

  local:    SPARKMESH_SPARK_MODE=managed, SPARKMESH_SPARK_CONNECT_PORT   (the copy's Connect server on local[2])
  cluster:  the same plus SPARKMESH_SPARK_MASTER=spark://127.0.0.1:<port> and SPARKMESH_SPARK_CONF (the driver on
            127.0.0.1, executors that fit the workers)

The commands: ``spark start``; for the example, ``fetchdf`` creating the external table raw.web_events (as
``./dev demo`` does); ``plan prod --auto-apply --no-prompts --end <last day>``. Then every prod view's row count
and checksum are compared; the script prints the times and "identical: yes/no". It stops each Connect server and
the cluster by pid, also when a step fails. The machine has 2 cores: the cluster is not expected to be faster.

``tests/reliability/test_standalone_cluster.py`` runs the same comparison on small projects (it imports this file).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from generate_project import START, generate_project

from dagster_sparkmesh.engine.standalone_cluster import StandaloneCluster, free_port, standalone_cluster
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.naming import view_name

BENCH_DIR = Path(__file__).resolve().parent
EXAMPLE_PROJECT = BENCH_DIR.parent / "example_project"
SPARKMESH = str(Path(sys.executable).parent / "sparkmesh")
COMMAND_TIMEOUT_SECONDS = 1800
FLOAT_DIGITS = 6
"""Floating-point sums depend on the order Spark adds partial results in, which differs from run to run (on one
machine too): checksums round DOUBLE/FLOAT columns to this many digits, more than any generated value carries."""


@dataclass(frozen=True)
class BenchProject:
    name: str
    folder: Path
    last_day: str
    """``--end`` of the plan (inclusive)."""


def copy_example(target: Path, last_day: str = "2024-01-31") -> BenchProject:
    """A copy of the example shop, without its generated state (catalog, caches)."""
    shutil.copytree(EXAMPLE_PROJECT, target, ignore=shutil.ignore_patterns(".sparkmesh", "__pycache__"))
    return BenchProject("example", target, last_day)


def generated(target: Path, models: int, days: int) -> BenchProject:
    generate_project(target, models=models, days=days)
    return BenchProject(f"generated {models} models x {days} days", target, (START + timedelta(days=days - 1)).isoformat())


def setup_commands(project: BenchProject) -> list[list[str]]:
    """Create the CSV tables the project reads but does not build (the example's ``external_data/``), as the demo."""
    folder = project.folder / "external_data"
    if not folder.is_dir():
        return []
    commands = []
    for external in load_project(project.folder).external_models.values():
        columns = ", ".join(f"`{name}` {data_type}" for name, data_type in external.columns)
        commands.append(["fetchdf", f"CREATE DATABASE IF NOT EXISTS {external.name.split('.')[0]}"])
        commands.append(["fetchdf", f"CREATE TABLE IF NOT EXISTS {external.name} ({columns}) "
                                    f"USING csv OPTIONS (header 'true') LOCATION '{folder.as_posix()}'"])
    return commands


def plan_command(project: BenchProject) -> list[str]:
    return ["plan", "prod", "--auto-apply", "--no-prompts", "--end", project.last_day]


def run_sparkmesh(project: Path, args: list[str], env: dict[str, str]) -> float:
    """``sparkmesh -p project args...`` in a fresh process with ``env`` added; its wall time. Fails loudly."""
    began = time.perf_counter()
    result = subprocess.run(
        [SPARKMESH, "-p", str(project), *args], capture_output=True, text=True, cwd=project,
        env={**os.environ, "NO_COLOR": "1", **env}, timeout=COMMAND_TIMEOUT_SECONDS, check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"sparkmesh {' '.join(args)[:200]} failed ({result.returncode}):\n"
                           f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return time.perf_counter() - began


def prod_view_checksums(engine, project_dir: Path) -> dict[str, tuple[int, str] | None]:
    """Per model: its prod view's row count and an order-independent checksum of all columns; None if no view.

    Few round trips (they cost most over Spark Connect): one listing per schema, one column lookup per view, and
    one query for all views.
    """
    views = {name: view_name(name, "prod") for name in sorted(load_project(project_dir).models)}
    listings = {schema: engine.catalog.list_schema(schema) for schema in {view.split(".")[0] for view in views.values()}}
    present = {name: view for name, view in views.items()
               if view.split(".")[1] in (listings[view.split(".")[0]] or set())}
    sums: dict[str, tuple[int, str] | None] = {name: None for name in views}
    if not present:
        return sums
    selects = [
        f"SELECT '{name}' AS model, COUNT(*) AS row_count, "
        f"CAST(SUM(CAST(xxhash64({_hashed_columns(engine, view)}) AS DECIMAL(38, 0))) AS STRING) AS checksum FROM {view}"
        for name, view in present.items()
    ]
    for name, count, checksum in engine.catalog.query_rows("\nUNION ALL\n".join(selects)):
        sums[name] = (count, checksum)
    return sums


def _hashed_columns(engine, view: str) -> str:
    return ", ".join(
        f"ROUND(`{column}`, {FLOAT_DIGITS})" if data_type in ("double", "float") else f"`{column}`"
        for column, data_type in engine.catalog.columns(view)
    )


def managed_env(port: int, cluster: StandaloneCluster | None = None) -> dict[str, str]:
    """The engine settings of a run, as environment variables: the only difference between local and cluster."""
    env = {"SPARKMESH_SPARK_MODE": "managed", "SPARKMESH_SPARK_CONNECT_PORT": str(port)}
    if cluster is not None:
        env["SPARKMESH_SPARK_MASTER"] = cluster.master_url
        env["SPARKMESH_SPARK_CONF"] = json.dumps(cluster.application_settings())
    return env


@dataclass(frozen=True)
class RunResult:
    server_seconds: float
    plan_seconds: float
    checksums: dict[str, tuple[int, str] | None]


def run_managed(project: BenchProject, cluster: StandaloneCluster | None) -> RunResult:
    """Start the copy's Connect server (on local[2] or the cluster), plan prod, read the checksums, stop it."""
    from dagster_sparkmesh.engine.adapter import SparkEngine
    from dagster_sparkmesh.engine.connect_server import stop_server
    from dagster_sparkmesh.engine.session import close_sessions, open_session
    from dagster_sparkmesh.project.config import SparkConnection

    port = free_port()
    env = managed_env(port, cluster)
    try:
        server_seconds = run_sparkmesh(project.folder, ["spark", "start"], env)
        for command in setup_commands(project):
            run_sparkmesh(project.folder, command, env)
        plan_seconds = run_sparkmesh(project.folder, plan_command(project), env)
        engine = SparkEngine(open_session(SparkConnection(mode="connect", remote=f"sc://127.0.0.1:{port}"), project.folder))
        checksums = prod_view_checksums(engine, project.folder)
    finally:
        close_sessions(project.folder)
        stop_server(project.folder)  # by the pid the server recorded
    return RunResult(server_seconds, plan_seconds, checksums)


def compare(project_name: str, local: RunResult, cluster: RunResult) -> bool:
    identical = local.checksums == cluster.checksums
    views = sum(value is not None for value in local.checksums.values())
    rows = sum(value[0] for value in local.checksums.values() if value is not None)
    print(f"\n{project_name}: {views} prod views, {rows} rows")
    print(f"  server start  local {local.server_seconds:7.1f} s   cluster {cluster.server_seconds:7.1f} s")
    print(f"  plan + apply  local {local.plan_seconds:7.1f} s   cluster {cluster.plan_seconds:7.1f} s")
    print(f"  identical: {'yes' if identical else 'no'}")
    for name in sorted(set(local.checksums) | set(cluster.checksums)):
        if local.checksums.get(name) != cluster.checksums.get(name):
            print(f"    differs: {name}: local {local.checksums.get(name)} cluster {cluster.checksums.get(name)}")
    return identical


def run(args: argparse.Namespace, workdir: Path) -> bool:
    projects = [
        (copy_example(workdir / "local" / "example"), copy_example(workdir / "cluster" / "example")),
        (generated(workdir / "local" / "generated", args.models, args.days),
         generated(workdir / "cluster" / "generated", args.models, args.days)),
    ]
    identical = True
    with standalone_cluster(workdir / "cluster_daemons") as cluster:
        print(f"standalone cluster at {cluster.master_url}: {cluster.state().alive_workers} workers", flush=True)
        for local_copy, cluster_copy in projects:
            local = run_managed(local_copy, None)
            on_cluster = run_managed(cluster_copy, cluster)
            identical &= compare(local_copy.name, local, on_cluster)
        print(f"\nexecutor tasks finished per worker: {cluster.finished_tasks_per_worker()}")
    print(f"\nidentical: {'yes' if identical else 'no'}")
    return identical


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    if args.keep:
        shutil.rmtree(args.keep, ignore_errors=True)
        identical = run(args, args.keep.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="sparkmesh_cluster_bench_") as tmp:
            identical = run(args, Path(tmp))
    raise SystemExit(0 if identical else 1)


if __name__ == "__main__":
    main()
