"""Issue 32: the managed server's port. Two projects on one machine each run `plan --auto-apply` with the default
engine at the same time, no setting changed (each server on a free port of its own, recorded with it); a fixed
port held by another project's server is an error naming that project; a server whose project folder was deleted
is stopped by its watcher."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from dagster_sparkmesh.engine.connect_server import is_our_server, server_project_on, server_status, stop_server
from tests.engine.test_default_server import server_project

pytestmark = [pytest.mark.usefixtures("spark"), pytest.mark.slow]  # the local session first: see tests/reliability

SCRIPT = Path(sys.executable).parent / "sparkmesh"


def _project(folder: Path, port: int | None = None) -> Path:
    return server_project(folder, port, idle_timeout=60)


def _sparkmesh(project: Path, *arguments: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SPARKMESH_SPARK_")}  # defaults
    return subprocess.run([str(SCRIPT), "-p", str(project), *arguments], capture_output=True, text=True, timeout=300,
                          env=env)


def _plan(project: Path) -> subprocess.CompletedProcess:
    return _sparkmesh(project, "plan", "prod", "--auto-apply", "--no-prompts", "--start", "2024-01-01", "--end", "2024-01-02")


def test_two_projects_plan_at_the_same_time_each_with_its_own_server(tmp_path):
    first, second = _project(tmp_path / "first"), _project(tmp_path / "second")
    try:
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(_plan, [first, second]))
        for result in results:
            assert result.returncode == 0, result.stdout + result.stderr
        ports = {server_status(first).port, server_status(second).port}
        assert len(ports) == 2 and None not in ports
        assert server_project_on(server_status(first).port) == first.resolve()

        # A third project that insists on the first one's port is told whose server holds it.
        third = _project(tmp_path / "third", server_status(first).port)
        refused = _plan(third)
        assert refused.returncode == 2
        assert f"is taken by the Spark server of another project, {first.resolve()}" in refused.stderr
        assert f"sparkmesh -p {first.resolve()} spark stop" in refused.stderr

        # The second project's folder is deleted and made again at once, as a script that copies a project afresh
        # does: its watcher stops the server nobody can reach any more (it would hold memory and a port).
        pid = server_status(second).pid
        assert is_our_server(pid)
        config = (second / "config.yaml").read_text()
        subprocess.run(["rm", "-rf", str(second)], check=True)
        second.mkdir()
        (second / "config.yaml").write_text(config)
        deadline = time.monotonic() + 60
        while is_our_server(pid) and time.monotonic() < deadline:
            time.sleep(1)
        assert not is_our_server(pid)
        assert is_our_server(server_status(first).pid)  # the other project's server is untouched
    finally:
        stop_server(first)
        if second.exists():
            stop_server(second)
