"""Stop the managed Spark Connect server once no client has used it for ``idle_timeout`` seconds.

The server is the default engine: the first command that needs Spark starts it, the following ones connect in
under a second. Left alone it would hold a JVM (and a gigabyte of heap) forever, so each server gets a watcher:
a small Python process (``python -m dagster_sparkmesh.engine.idle_watcher``) in a session of its own, which
outlives the command that started it and ends with the server. This module is what the server's owner and the
watcher share: when the server counts as used, and how the watcher is started and stopped.

"In use" is read from the operating system, not from clients' good manners: a Spark Connect client keeps its
gRPC connection open as long as its session lives, so an established TCP connection to the server's port is a
client (a Dagster step computing for an hour included). A client also touches ``last_used`` whenever it obtains
the server (``start_server``) and when it closes its sessions (``session.close_sessions``): where /proc is missing
(macOS) that is the only clock, so there a session open longer than ``idle_timeout`` is not seen as a client.

The watcher stops the server only under the start lock, after checking once more: a command that obtained the
server a moment ago has touched ``last_used`` under that same lock, so it is never handed a server about to stop.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

LAST_USED = "last_used"
WATCHER_MODULE = "dagster_sparkmesh.engine.idle_watcher"
_TCP_ESTABLISHED = "01"
_watchers: dict[int, subprocess.Popen] = {}


def mark_used(folder: Path) -> None:
    """Record that a client obtained or released the server (``folder``: the server's state folder)."""
    with contextlib.suppress(OSError):  # the folder went away with a stopped project: nothing to keep alive
        (folder / LAST_USED).touch()  # sets the time of an existing file too


def seconds_since_use(folder: Path) -> float:
    try:
        return max(0.0, time.time() - (folder / LAST_USED).stat().st_mtime)  # file times are wall-clock seconds
    except OSError:
        return float("inf")


def established_clients(port: int, proc: Path = Path("/proc")) -> int | None:
    """TCP connections established to ``port`` on this machine; None where /proc/net is not available."""
    counted, readable = 0, False
    for table in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        readable = True
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[3] == _TCP_ESTABLISHED and int(fields[1].rsplit(":", 1)[1], 16) == port:
                counted += 1
    return counted if readable else None


def is_idle(folder: Path, port: int, idle_timeout: float) -> bool:
    if established_clients(port):
        mark_used(folder)  # the idle clock starts when the last client leaves
        return False
    return seconds_since_use(folder) >= idle_timeout


def start_watcher(folder: Path, project_path: Path, server_pid: int, port: int, idle_timeout: float) -> int:
    """Launch the watcher of the server ``server_pid``; returns its pid."""
    mark_used(folder)
    command = [
        sys.executable, "-m", WATCHER_MODULE, str(project_path), str(server_pid), str(port), str(idle_timeout),
    ]
    with open(folder / "idle-stop.log", "ab") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )
    _watchers[process.pid] = process
    return process.pid


def stop_watcher(pid: int | None) -> None:
    """End a watcher (not this process: a watcher stopping its server is on its way out anyway)."""
    if pid is None or pid == os.getpid() or not _is_watcher(pid):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    child = _watchers.pop(pid, None)
    if child is not None:
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()


def _is_watcher(pid: int) -> bool:
    child = _watchers.get(pid)
    if child is not None:
        return child.poll() is None
    try:
        return WATCHER_MODULE in (Path("/proc") / str(pid) / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


def poll_interval(idle_timeout: float) -> float:
    return min(10.0, max(0.5, idle_timeout / 4))
