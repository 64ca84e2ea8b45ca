"""The managed Spark Connect server: one per project, on 127.0.0.1, owning the project's catalog.

Embedded Derby admits one JVM at a time, so processes that share a project (Dagster's multiprocess executor,
concurrent runs, the CLI) share this server instead of each booting its own Hive session.

The server is started from the pip-installed pyspark (``bin/spark-submit --class ...SparkConnectServer``, the
same thing ``sbin/start-connect-server.sh`` runs, minus its daemon wrapper) in a process group of its own, so that
stopping it also ends its Python workers. ``<project>/.sparkmesh/spark/server.json`` records pid, port and log.
A record whose process is gone (or whose pid now belongs to something else) is stale and removed.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyspark

from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.project.config import SparkConnection, state_dir
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.engine import class_archive
from dagster_sparkmesh.engine.idle_stop import mark_used, start_watcher, stop_watcher
from dagster_sparkmesh.engine.processes import group_listens_on, group_members, is_running, is_zombie
from dagster_sparkmesh.engine.settings import forget_hive_sessions, require_java, session_settings

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
HOST = "127.0.0.1"
START_TIMEOUT_SECONDS = 180.0
STOP_TIMEOUT_SECONDS = 30.0

# Servers started by this process: we must reap them, or a dead server lingers as a zombie that looks alive.
_children: dict[int, subprocess.Popen] = {}


class ServerStatus(Record):
    running: bool
    pid: int | None = None
    port: int | None = None
    url: str | None = None
    log_path: Path | None = None
    watcher_pid: int | None = None
    """The process that stops the server once idle (``engine.idle_stop``); None: the server never idles out."""
    class_archive_dump: Path | None = None
    """Where the server's JVM writes its class-data archive when it exits (``engine.class_archive``), if it does."""
    answered: bool = False
    """This call launched the server and saw it answer a query (never recorded: a later caller has not seen it)."""


def server_dir(project_path: Path) -> Path:
    return state_dir(project_path) / "spark"


def server_status(project_path: Path) -> ServerStatus:
    """What the pid file says, checked against the live process and the port; a stale file is removed."""
    recorded = _read_record(project_path)
    if recorded is None:
        return ServerStatus(running=False)
    if not is_our_server(recorded.pid):
        _record_path(project_path).unlink(missing_ok=True)
        class_archive.settle(recorded.class_archive_dump, exited_cleanly=True)  # it ended on its own, after writing
        return ServerStatus(running=False, log_path=recorded.log_path)
    return recorded.model_copy(update={"running": port_open(recorded.port)})


def start_server(project_path: Path, connection: SparkConnection, *, probe_running: bool = True) -> ServerStatus:
    """Start the project's server, or reuse it when it already runs and answers a query. ``probe_running=False``:
    a running server is reused once it listens; the caller's own first query tells whether it serves (a probe's
    session of its own costs ~0.4 s per command)."""
    # Concurrent first runs of a Dagster backfill all get here: one launches, the others wait and reuse it.
    with start_lock(project_path):
        status = _start_or_reuse(project_path, connection, probe_running)
        mark_used(server_dir(project_path))  # under the lock: the idle watcher cannot stop it before we connect
        return status


def recorded_pid(project_path: Path) -> int | None:
    recorded = _read_record(project_path)
    return recorded.pid if recorded is not None else None


@contextmanager
def start_lock(project_path: Path) -> Iterator[None]:
    """Held while a server is started, reused or stopped for being idle."""
    folder = server_dir(project_path)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "start.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _start_or_reuse(project_path: Path, connection: SparkConnection, probe_running: bool) -> ServerStatus:
    status = server_status(project_path)
    if status.pid is not None:
        _wait_until_healthy(status, probe=probe_running)
        return status.model_copy(update={"running": True})
    status = _launch_until_healthy(project_path, connection)
    if connection.idle_timeout > 0:
        watcher = start_watcher(server_dir(project_path), project_path, status.pid or 0, status.port or 0, connection.idle_timeout)
        status = status.model_copy(update={"watcher_pid": watcher})
        _write_record(project_path, status)
    return status.model_copy(update={"running": True, "answered": True})


def _launch_until_healthy(project_path: Path, connection: SparkConnection) -> ServerStatus:
    """Launch the server and wait until it serves. A port chosen here is free when chosen, but another program may
    bind it before the JVM does (seconds later); the server then exits, and is launched once more on another port."""
    for attempt in (1, 2):
        port = connection.connect_port or free_port()
        if port_open(port):
            raise port_taken(port)
        log_start = _log_size(server_dir(project_path) / "connect-server.log")
        status = _launch(project_path, connection, port)
        try:
            _wait_until_healthy(status)
            return status
        except EngineError:
            stop_server(project_path)
            lost_race = connection.connect_port is None and _bind_failed(status.log_path, log_start)
            if attempt == 2 or not lost_race:
                raise
    raise AssertionError("unreachable")


def _log_size(log_path: Path) -> int:
    try:
        return log_path.stat().st_size
    except OSError:
        return 0


def _bind_failed(log_path: Path | None, start: int) -> bool:
    """Whether this launch's part of the log (from byte ``start``) says the port was taken."""
    try:
        with open(log_path or "", "rb") as log:
            log.seek(start)
            return b"java.net.BindException" in log.read()
    except OSError:
        return False


def stop_server(project_path: Path) -> None:
    """Stop the server and its children (whole process group) and wait for them; no-op when none runs."""
    recorded = _read_record(project_path)
    exited_cleanly = True  # also a server that ended on its own: the check before the rename judges its archive
    if recorded is not None and recorded.pid is not None and is_our_server(recorded.pid):
        exited_cleanly = _terminate_group(recorded.pid)
    if recorded is not None:
        class_archive.settle(recorded.class_archive_dump, exited_cleanly=exited_cleanly)
        stop_watcher(recorded.watcher_pid)
    _record_path(project_path).unlink(missing_ok=True)


def port_open(port: int | None, host: str = HOST, timeout: float = 0.5) -> bool:
    if port is None:
        return False
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port() -> int:
    """A port nothing listens on now (the server binds it a few seconds later)."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def port_taken(port: int) -> EngineError:
    """The error for an explicit ``connect_port`` that something else holds, naming the other project's server."""
    other = server_project_on(port)
    if other is not None:
        return EngineError(
            f"port {HOST}:{port} is taken by the Spark server of another project, {other}",
            hint=f"stop it (`sparkmesh -p {other} spark stop`), or remove connect_port from this project's config.yaml "
            "(each project then gets a free port of its own)",
        )
    return EngineError(
        f"port {HOST}:{port} is taken by another program",
        hint="remove gateways.<name>.connection.connect_port from config.yaml (a free port is chosen), or set a free one",
    )


def server_project_on(port: int, proc: Path = Path("/proc")) -> Path | None:
    """The project whose managed server listens on ``port``, read from the servers' command lines."""
    wanted = f"spark.connect.grpc.binding.port={port}"
    for entry in proc.glob("[0-9]*"):
        try:
            arguments = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if SERVER_CLASS in arguments and wanted in arguments:
            warehouse = next((a.split("=", 1)[1] for a in arguments if a.startswith("spark.sql.warehouse.dir=")), None)
            return Path(warehouse.removeprefix("file:")).parent.parent if warehouse else None
    return None


def _launch(project_path: Path, connection: SparkConnection, port: int) -> ServerStatus:
    java = require_java()
    folder = server_dir(project_path)
    folder.mkdir(parents=True, exist_ok=True)
    forget_hive_sessions(project_path)
    log_path = folder / "connect-server.log"
    spark_home = Path(pyspark.__file__).parent
    command = [str(spark_home / "bin" / "spark-submit"), "--master", connection.master, "--class", SERVER_CLASS]
    command += ["--name", f"sparkmesh connect server ({project_path.name})"]
    settings = _server_settings(project_path, connection, port)
    archive_dump = class_archive.add_archive(settings, java, may_write=True)
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    env = {**os.environ, "SPARK_HOME": str(spark_home), "SPARK_LOG_DIR": str(folder), "PYSPARK_PYTHON": sys.executable}
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            cwd=folder, start_new_session=True,
        )
    _children[process.pid] = process
    class_archive.note_writer(archive_dump, process.pid)
    status = ServerStatus(
        running=False, pid=process.pid, port=port, url=f"sc://{HOST}:{port}", log_path=log_path,
        class_archive_dump=archive_dump,
    )
    _write_record(project_path, status)
    return status


def _server_settings(project_path: Path, connection: SparkConnection, port: int) -> dict[str, str]:
    return {
        **session_settings(connection, project_path),
        "spark.connect.grpc.binding.address": HOST,
        "spark.connect.grpc.binding.port": str(port),
        "spark.pyspark.python": sys.executable,
    }


def _wait_until_healthy(status: ServerStatus, probe: bool = True) -> None:
    """Wait for the port, then (``probe``) run a trivial query through a client: listening is not serving."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not _serving_port(status):
        if status.pid is None or not _alive(status.pid):
            raise EngineError(
                "the Spark Connect server exited while starting",
                snippet=_log_tail(status.log_path),
                hint=f"see the full log in {status.log_path}",
            )
        if time.monotonic() > deadline:
            raise EngineError(
                f"the Spark Connect server did not open {status.url} within {START_TIMEOUT_SECONDS:.0f} s",
                snippet=_log_tail(status.log_path),
                hint=f"see {status.log_path}; `sparkmesh server stop` cleans up",
            )
        time.sleep(0.2)
    if probe:
        probe_query(status.url or "")


def _serving_port(status: ServerStatus) -> bool:
    """The port is open and held by the server's own process group (never another program's listener)."""
    return port_open(status.port) and status.pid is not None and group_listens_on(status.pid, status.port or 0)


def probe_query(url: str, session=None) -> None:
    """A trivial query through ``session``, or through a session of its own (stopped after)."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    try:
        probe = session or ConnectSession.builder.remote(url).create()
        try:
            probe.sql("SELECT 1").collect()
        finally:
            if session is None:
                probe.stop()
    except Exception as error:  # any failure here means "not serving"; report it as such
        raise EngineError(f"the Spark Connect server at {url} does not answer queries: {error}") from error


def terminate_server(pid: int) -> None:
    """Stop a server by its pid (and its process group), when it is one: for a server whose project is gone."""
    if is_our_server(pid):
        _terminate_group(pid)


def _terminate_group(pid: int) -> bool:
    """Whether the group ended on SIGTERM (its JVM ran its exit: hooks, the class-data archive), not SIGKILL."""
    exited_cleanly = True
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT_SECONDS), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            break
        exited_cleanly = sig == signal.SIGTERM
        deadline = time.monotonic() + wait
        while _group_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not _group_alive(pid):
            break
    _children.pop(pid, None)
    return exited_cleanly


def _group_alive(pgid: int) -> bool:
    _alive(pgid)  # reaps the leader if we started it
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return any(not is_zombie(pid) for pid in group_members(pgid))


def _alive(pid: int) -> bool:
    child = _children.get(pid)
    if child is not None:
        return child.poll() is None
    return is_running(pid)


def is_our_server(pid: int | None) -> bool:
    """Alive and really a Spark Connect server: a pid may be reused by an unrelated process after a reboot."""
    if pid is None or not _alive(pid):
        return False
    try:
        command_line = (Path("/proc") / str(pid) / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return True  # no /proc (macOS): trust the live pid
    return SERVER_CLASS in command_line


def _record_path(project_path: Path) -> Path:
    return server_dir(project_path) / "server.json"


def _read_record(project_path: Path) -> ServerStatus | None:
    try:
        recorded = json.loads(_record_path(project_path).read_text())
        # Fields another sparkmesh version wrote are ignored: its server must still be found, reused and stopped.
        return ServerStatus.model_validate({k: v for k, v in recorded.items() if k in ServerStatus.model_fields})
    except (OSError, ValueError, AttributeError):
        return None


def _write_record(project_path: Path, status: ServerStatus) -> None:
    path = _record_path(project_path)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(status.model_dump_json())
    temporary.replace(path)


def _log_tail(log_path: Path | None, lines: int = 12) -> str:
    try:
        text = log_path.read_text(errors="replace") if log_path else ""
    except OSError:
        return ""
    kept = [line for line in text.splitlines() if line.strip() and not line.startswith("\t")]
    return "\n".join(kept[-lines:])
