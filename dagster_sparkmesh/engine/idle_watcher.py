"""The idle watcher's process: ``python -m dagster_sparkmesh.engine.idle_watcher PROJECT PID PORT SECONDS``.

Started by ``connect_server`` beside each managed server it launches (see ``idle_stop`` for what "idle" means);
it exits when the server is gone, or once it stopped the server: for being idle, or for being out of reach (its
project folder deleted, or made again without it).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from dagster_sparkmesh.engine import connect_server
from dagster_sparkmesh.engine.idle_stop import WATCHER_MODULE, is_idle, poll_interval


def watch(project_path: Path, server_pid: int, port: int, idle_timeout: float) -> str:
    """Wait until the server is gone or idle (then stop it); returns what happened."""
    folder = connect_server.server_dir(project_path)
    while True:
        time.sleep(poll_interval(idle_timeout))
        if not project_path.is_dir():  # deleted: nobody can reach or stop the server through the project any more
            connect_server.terminate_server(server_pid)
            return f"stopped the server (pid {server_pid}): its project folder {project_path} was deleted"
        if not connect_server.is_our_server(server_pid):
            return "the server stopped"
        if connect_server.recorded_pid(project_path) != server_pid:
            # The project no longer records it (its folder deleted and made again, as a script that copies a
            # project afresh does; its server file removed; another server started for it): nobody reaches it.
            connect_server.terminate_server(server_pid)
            return f"stopped the server (pid {server_pid}): its project {project_path} no longer records it"
        if not is_idle(folder, port, idle_timeout):
            continue
        with connect_server.start_lock(project_path):
            still_ours = connect_server.recorded_pid(project_path) == server_pid
            if still_ours and is_idle(folder, port, idle_timeout):
                connect_server.stop_server(project_path)
                return f"stopped the idle server (pid {server_pid}) after {idle_timeout:g} s without a client"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=WATCHER_MODULE, description="stop an idle managed Spark Connect server")
    parser.add_argument("project", type=Path)
    parser.add_argument("server_pid", type=int)
    parser.add_argument("port", type=int)
    parser.add_argument("idle_timeout", type=float)
    args = parser.parse_args(argv)
    outcome = watch(args.project, args.server_pid, args.port, args.idle_timeout)
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {outcome}", flush=True)


if __name__ == "__main__":
    main()
