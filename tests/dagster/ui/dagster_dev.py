"""``dagster dev`` on a private copy of the example project, for the browser test.

The copy gets its own Dagster instance, free ports for the webserver and the managed Spark Connect server, and its
own ``.sparkmesh`` (catalog, warehouse, state), so the test never touches the repository's example state.
Every process is stopped by pid: ``dagster dev`` (webserver, daemon, code server and run workers are in its
process group) and the project's Spark Connect server (its own process group, recorded in ``server.json``).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from cdp import stop_process_group

from dagster_sparkmesh.dagster.event_storage import batched_instance_yaml

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "example_project"
LOCATION = "example_shop"
QUICK_DAEMON = Path(__file__).resolve().parent / "quick_daemon"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def copy_example(target: Path, end: str | None = None) -> Path:
    """The example project; its managed Spark Connect server takes a free port of its own when it starts (a port
    chosen here, long before, could be taken by then). ``end``: the last day of every incremental model (a few
    partitions instead of every day since 2024)."""
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".sparkmesh", "__pycache__"))
    if end:
        for model in (target / "models").rglob("*.sql"):
            text = model.read_text()
            if "kind INCREMENTAL" in text:
                name_line = text.splitlines(keepends=True)[1]
                assert name_line.lstrip().startswith("name "), f"{model} changed shape: update copy_example"
                model.write_text(text.replace(name_line, f"{name_line}  end '{end}',\n", 1))
    return target


@dataclass
class DagsterDev:
    process: subprocess.Popen
    url: str
    log_path: Path
    home: Path

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def daemon_story(self, lines: int = 30) -> str:
        """What a test's timeout message needs: every run the instance holds (status, job, partitions, and a
        failed run's error), the runs' own log lines (their steps and errors), then the daemon's last lines
        without the noise (blank lines, step debug events, the code location name warning)."""
        noise = ("code location name", " - DEBUG - ")
        kept = [line for line in self.log_path.read_text(errors="replace").splitlines()
                if line.strip() and not any(part in line for part in noise)]
        daemon = [line for line in kept if "dagster.daemon" in line]
        runs = [line for line in kept if line not in daemon][-3 * lines:]
        return "\n".join(["runs:", *run_summary(self.home), "their log:", *runs, "the daemon:", *daemon[-lines:]])


def run_summary(home: Path) -> list[str]:
    """A line per run of the instance at ``home``, oldest first; a failed run's error messages under it."""
    import dagster as dg

    instance = open_instance(home)
    lines = []
    for record in reversed(instance.get_run_records()):
        run = record.dagster_run
        span = run.tags.get("dagster/asset_partition_range_start", run.tags.get("dagster/partition", ""))
        lines.append(f"  {run.run_id[:8]} {run.status.value} {run.job_name} {span} {run.tags.get('dagster/run_key', '')}")
        if run.status == dg.DagsterRunStatus.FAILURE:
            lines.extend(f"    {message}" for message in _failure_messages(instance, run.run_id))
    return lines


def _failure_messages(instance, run_id: str) -> list[str]:
    import dagster as dg

    failures = [dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.RUN_FAILURE, dg.DagsterEventType.ENGINE_EVENT]
    messages = []
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None or event.event_type not in failures:
            continue
        error = getattr(event.event_specific_data, "error", None)
        if error is not None or event.event_type != dg.DagsterEventType.ENGINE_EVENT:
            messages.append(f"{event.event_type.value}: {entry.message} {error.to_string() if error else ''}"[-3000:])
    return messages


def start_dagster_dev(project: Path, home: Path, port: int, timeout: float = 120.0) -> DagsterDev:
    workspace = project.parent / "workspace.yaml"
    workspace.write_text(
        "load_from:\n"
        f"  - python_module:\n      module_name: shop_dagster.definitions\n"
        f"      location_name: {LOCATION}\n      working_directory: {project.name}\n"
    )
    home.mkdir(parents=True, exist_ok=True)
    # No telemetry (these machines have no network) and no first-visit community dialog over the page; freshness
    # evaluated and the batched event log, as `./dev ui` sets them.
    settings = "telemetry:\n  enabled: false\nnux:\n  enabled: false\nfreshness:\n  enabled: true\n" + (
        "run_coordinator:\n  module: dagster.core.run_coordinator\n  class: QueuedRunCoordinator\n"
        "  config:\n    dequeue_interval_seconds: 1\n"
    )
    (home / "dagster.yaml").write_text(settings + batched_instance_yaml(str(home / "history" / "runs")))
    log_path = project.parent / "dagster-dev.log"
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        # Dagster's daemon ticks every 3 s instead of 30 (see quick_daemon/sitecustomize.py).
        "PYTHONPATH": os.pathsep.join(filter(None, [str(QUICK_DAEMON), os.environ.get("PYTHONPATH")])),
    }
    dagster = Path(sys.executable).parent / "dagster"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [str(dagster), "dev", "-w", str(workspace), "-h", "127.0.0.1", "-p", str(port)],
            cwd=project.parent, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=_default_sigint,  # noqa: PLW1509 (only resets one signal)
        )
    dev = DagsterDev(process, f"http://127.0.0.1:{port}", log_path, home)
    try:
        _wait_for_webserver(dev, timeout)
    except BaseException:
        stop_process_group(process)
        raise
    return dev


def open_instance(home: Path):
    """The Dagster instance of ``home`` (the test process reads runs and events where ``dagster dev`` writes them)."""
    import dagster as dg
    from dagster._core.instance.ref import InstanceRef

    return dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home)))


def wait_until(what: str, done, timeout: float, dev: DagsterDev | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return
        time.sleep(1)
    story = f":\n{dev.daemon_story()}" if dev else ""
    raise AssertionError(f"timed out waiting for {what} ({timeout:.0f} s){story}")


def _default_sigint() -> None:
    """dagster dev stops its webserver and daemon with SIGINT; a background job (CI, pytest run from a script)
    inherits SIGINT ignored, and then they would never stop. Restore the default for the whole tree."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_webserver(dev: DagsterDev, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if dev.process.poll() is not None:
            raise RuntimeError(f"dagster dev exited with {dev.process.returncode}:\n{dev.log_tail()}")
        try:
            with urllib.request.urlopen(f"{dev.url}/server_info", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"dagster dev did not serve {dev.url} within {timeout:.0f} s:\n{dev.log_tail()}")


def stop_dagster_dev(dev: DagsterDev) -> None:
    # SIGTERM first: dagster dev then stops its webserver, daemon and code server itself.
    stop_process_group(dev.process, timeout=30.0)


DIALOG = "document.querySelector('[role=dialog]')"


def choose_partitions(browser, selection: str, expected: str) -> None:
    """In an open launch dialog, type ``selection`` (``2024-01-03`` or ``[2024-01-01...2024-01-03]``) into the
    partition input, as a person does, and wait until the dialog says ``expected`` (``1 partition``)."""
    browser.click(f"{DIALOG}.querySelector('input[type=text]')", "the partition selection input")
    browser.evaluate(f"{DIALOG}.querySelector('input[type=text]').select()")
    browser.type_text(selection)
    browser.press_enter()
    browser.wait_for(f"{DIALOG}.innerText.includes('{expected}')", f"{expected} selected")
