"""A real ``dagster-daemon`` over the test shop in a git repository: the shared parts of the daemon-driven tests.

The shop gets a managed Spark Connect server on a free port (its run processes share it), a ``.gitignore`` for its
``.sparkmesh`` and a first commit on ``main``; the daemon runs on a private Dagster home, stopped by its process
group; the project's Connect server is stopped by ``stop_spark``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cdp import stop_process_group
from dagster_dev import free_port

SHOP = Path(__file__).resolve().parents[1] / "projects" / "shop"
MANAGED = "gateways:\n  local:\n    connection:\n      type: spark\n      mode: managed\n      connect_port: {port}\ndefault_gateway: local\n"
BIN = Path(sys.executable).parent


def git(repo: Path, *args: str) -> str:
    user = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    return subprocess.run(["git", *user, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def shop_repository(target: Path) -> Path:
    shutil.copytree(SHOP, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    config = target / "config.yaml"
    config.write_text(MANAGED.format(port=free_port()) + config.read_text())
    (target / ".gitignore").write_text(".sparkmesh/\n")
    git(target, "init", "-q", "-b", "main")
    git(target, "add", ".")
    git(target, "commit", "-qm", "first")
    return target


def stop_spark(project: Path) -> None:
    subprocess.run([str(BIN / "sparkmesh"), "-p", str(project), "spark", "stop"], capture_output=True, timeout=120,
                   check=False)


def daemon_workspace(folder: Path, definitions: str, location: str) -> Path:
    """A Dagster home (``folder/dagster_home``: set DAGSTER_HOME to it) and a workspace loading ``definitions``."""
    home = folder / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    (folder / "definitions.py").write_text(definitions)
    workspace = folder / "workspace.yaml"
    workspace.write_text(
        f"load_from:\n  - python_file:\n      relative_path: definitions.py\n      location_name: {location}\n"
    )
    return workspace


class Daemon:
    """``dagster-daemon run`` on a workspace, its output in ``log_name`` beside it, stopped by its process group."""

    def __init__(self, workspace: Path, env: dict[str, str] | None = None, log_name: str = "daemon.log") -> None:
        variables = {**os.environ, **(env or {}), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
        self.log = workspace.parent / log_name
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [str(BIN / "dagster-daemon"), "run", "-w", str(workspace)],
                cwd=workspace.parent, env=variables, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def wait(self, what: str, done: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if done():
                return
            assert self.process.poll() is None, f"dagster-daemon exited:\n{self.tail()}"
            time.sleep(2)
        raise AssertionError(f"timed out waiting for {what}:\n{self.tail()}")

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])

    def stop(self) -> None:
        stop_process_group(self.process, timeout=30.0)
