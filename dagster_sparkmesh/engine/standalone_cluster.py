"""A Spark standalone cluster on this machine: one master and N workers from the pip-installed pyspark, on 127.0.0.1.

sparkmesh never needs it to run a project; it exists to exercise the cluster path (executors in other JVMs than the
driver, writing into the warehouse) where no cluster is at hand: the cluster test and ``bench/cluster_bench.py``.
A real deployment points ``master:`` or ``remote:`` at its own cluster (README, "Running on a cluster").

Each daemon runs ``bin/spark-class <class>`` in a process group of its own; executors are children of their
worker, so stopping a worker's group also ends its executors. Stop the applications (the Connect server) first.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from dagster_sparkmesh.engine.processes import group_members, is_zombie
from dagster_sparkmesh.engine.settings import require_java
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.records import Record

HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
START_TIMEOUT_SECONDS = 180.0
STOP_TIMEOUT_SECONDS = 30.0
EXECUTOR_MEMORY = "512m"
"""Below a worker's memory, so that every worker can host one executor."""


class WorkerState(Record):
    id: str
    state: str
    cores: int
    cores_used: int


class ApplicationState(Record):
    id: str
    name: str
    state: str
    cores: int


class ClusterState(Record):
    """What the master reports on ``/json``."""

    workers: tuple[WorkerState, ...]
    active_applications: tuple[ApplicationState, ...]

    @property
    def alive_workers(self) -> int:
        return sum(worker.state == "ALIVE" for worker in self.workers)


@dataclass
class StandaloneCluster:
    folder: Path
    master_url: str
    """``spark://127.0.0.1:<port>``: the ``master`` of a session or managed server running on this cluster."""
    ui_url: str
    cores_per_worker: int
    worker_dirs: tuple[Path, ...] = ()
    processes: list[subprocess.Popen] = field(default_factory=list)
    """Master first, then the workers."""

    def state(self) -> ClusterState:
        return _parse_state(_get_json(f"{self.ui_url}/json"))

    def application_settings(self) -> dict[str, str]:
        """Spark settings an application (driver) needs on this cluster: reachable on 127.0.0.1, executors that fit."""
        return {
            "spark.driver.host": HOST,
            "spark.driver.bindAddress": HOST,
            "spark.executor.memory": EXECUTOR_MEMORY,
            "spark.executor.cores": str(self.cores_per_worker),
        }

    def finished_tasks_per_worker(self) -> tuple[int, ...]:
        """Tasks the executors of each worker have finished, counted in their logs: where the work really ran."""
        return tuple(
            sum(log.read_text(errors="replace").count("Finished task") for log in work_dir.glob("app-*/*/stderr"))
            for work_dir in self.worker_dirs
        )

    def stop(self) -> None:
        """Workers (with their executors) first, then the master; each whole process group, waited for."""
        for process in reversed(self.processes):
            _stop_group(process)
        self.processes.clear()


@contextmanager
def standalone_cluster(
    folder: Path, *, workers: int = 2, cores_per_worker: int = 1, memory_per_worker: str = "1g"
) -> Iterator[StandaloneCluster]:
    """A running cluster for the ``with`` block, stopped (by process group) however the block ends."""
    cluster = start_cluster(folder, workers=workers, cores_per_worker=cores_per_worker, memory_per_worker=memory_per_worker)
    try:
        yield cluster
    finally:
        cluster.stop()


def start_cluster(
    folder: Path, *, workers: int = 2, cores_per_worker: int = 1, memory_per_worker: str = "1g"
) -> StandaloneCluster:
    """Start the master, then the workers, and return once every worker has registered with the master."""
    require_java()
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    master_port, ui_port = free_port(), free_port()
    cluster = StandaloneCluster(
        folder=folder, master_url=f"spark://{HOST}:{master_port}", ui_url=f"http://{HOST}:{ui_port}",
        cores_per_worker=cores_per_worker,
    )
    try:
        master_arguments = ["--host", HOST, "--port", str(master_port), "--webui-port", str(ui_port)]
        # The master's REST submission server would take the fixed port 6066: nothing here submits through it.
        rest_off = {"SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false"}
        cluster.processes.append(_launch(MASTER_CLASS, master_arguments, folder / "master.log", folder, **rest_off))
        # Workers start meanwhile (JVM start-up dominates) and retry registering until the master is up.
        for index in range(workers):
            work_dir = folder / f"worker-{index}"
            cluster.worker_dirs += (work_dir,)
            cluster.processes.append(_launch_worker(cluster, work_dir, cores_per_worker, memory_per_worker))
        _wait_for(cluster, lambda state: state.alive_workers == workers, f"{workers} worker(s) to register")
    except BaseException:
        cluster.stop()
        raise
    return cluster


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def _launch_worker(cluster: StandaloneCluster, work_dir: Path, cores: int, memory: str) -> subprocess.Popen:
    work_dir.mkdir(parents=True, exist_ok=True)
    arguments = [
        "--host", HOST, "--port", str(free_port()), "--webui-port", str(free_port()),
        "--cores", str(cores), "--memory", memory, "--work-dir", str(work_dir), cluster.master_url,
    ]
    # Executors' shuffle and spill files stay in the worker's folder, not in the machine's /tmp.
    return _launch(WORKER_CLASS, arguments, work_dir / "worker.log", cluster.folder, SPARK_LOCAL_DIRS=str(work_dir / "local"))


def _launch(main_class: str, arguments: list[str], log_path: Path, folder: Path, **extra_env: str) -> subprocess.Popen:
    spark_home = Path(pyspark.__file__).parent
    # SPARK_LOCAL_IP binds the daemons (RPC and web UI) to 127.0.0.1 instead of every interface.
    env = {**os.environ, "SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": HOST, "SPARK_LOG_DIR": str(folder), **extra_env}
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [str(spark_home / "bin" / "spark-class"), main_class, *arguments],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=folder,
            start_new_session=True,
        )


def _wait_for(cluster: StandaloneCluster, ready: Callable[[ClusterState], bool], what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while True:
        for process in cluster.processes:
            if process.poll() is not None:
                raise EngineError(
                    f"a Spark standalone daemon exited (code {process.returncode}) while waiting for {what}",
                    snippet=_log_tails(cluster),
                    hint=f"see the logs under {cluster.folder}",
                )
        try:
            if ready(cluster.state()):
                return
        except (OSError, ValueError):
            pass  # the master's web UI is not up yet
        if time.monotonic() > deadline:
            raise EngineError(
                f"timed out after {START_TIMEOUT_SECONDS:.0f} s waiting for {what}",
                snippet=_log_tails(cluster),
                hint=f"see the logs under {cluster.folder}",
            )
        time.sleep(0.5)


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def _parse_state(raw: dict) -> ClusterState:
    workers = tuple(
        WorkerState(id=item["id"], state=item["state"], cores=item["cores"], cores_used=item["coresused"])
        for item in raw.get("workers", [])
    )
    applications = tuple(
        ApplicationState(id=item["id"], name=item["name"], state=item["state"], cores=item["cores"])
        for item in raw.get("activeapps", [])
    )
    return ClusterState(workers=workers, active_applications=applications)


def _stop_group(process: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT_SECONDS), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while _group_alive(process) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not _group_alive(process):
            break
    process.poll()


def _group_alive(process: subprocess.Popen) -> bool:
    process.poll()  # reap the leader, or it stays a zombie member of the group
    try:
        os.killpg(process.pid, 0)
    except ProcessLookupError:
        return False
    # Orphaned executors end as zombies when nobody reaps them (no init in some containers): those are gone.
    return any(not is_zombie(pid) for pid in group_members(process.pid))


def _log_tails(cluster: StandaloneCluster, lines: int = 6) -> str:
    tails = []
    for log_path in sorted(cluster.folder.rglob("*.log")):
        text = log_path.read_text(errors="replace").splitlines()
        kept = [line for line in text if line.strip() and not line.startswith("\t")][-lines:]
        tails.append(f"{log_path.name}:\n" + "\n".join(kept))
    return "\n".join(tails)
