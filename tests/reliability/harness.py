"""Helpers of the reliability suite: child processes, tiny projects on the shared Connect server, checksums.

Loaded by file path (pytest runs with --import-mode=importlib, so tests/ is no package).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

SPARKMESH = str(Path(sys.executable).parent / "sparkmesh")
CHILD_TIMEOUT_SECONDS = 240


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class ConnectServer:
    url: str
    folder: Path
    pid: int


def connect_config(url: str) -> str:
    return textwrap.dedent(
        f"""\
        model_defaults:
          dialect: spark
          start: '2024-01-01'
          cron: '@daily'
        gateways:
          local:
            connection:
              mode: connect
              remote: {url}
        """
    )


def run_cli(project: Path, *args: str, env: dict[str, str] | None = None, timeout: float = CHILD_TIMEOUT_SECONDS):
    """``sparkmesh -p project args...`` in a child process (its own interpreter, its own Spark client)."""
    child_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **(env or {})}
    for name in ("SPARKMESH_CRASH_AT", "SPARKMESH_CRASH_DELAY"):
        if env is None or name not in env:
            child_env.pop(name, None)
    return subprocess.run(
        [SPARKMESH, "-p", str(project), *args],
        capture_output=True, text=True, env=child_env, timeout=timeout, cwd=project,
    )


CRASH_MODELS = {
    "events.sql": """
        MODEL (name {p}_raw.events, kind FULL);

        SELECT d.ds, i.id, i.id * 10 AS amount
        FROM (SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-02', INTERVAL 1 DAY)) AS ds) AS d
        CROSS JOIN (SELECT explode(sequence(1, 3)) AS id) AS i
        """,
    "daily.sql": """
        MODEL (
          name {p}_shop.daily,
          kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 1),
          grain ds,
          audits (not_null(columns := (ds, total)))
        );

        SELECT ds, SUM(amount) AS total, COUNT(*) AS orders
        FROM {p}_raw.events
        WHERE ds BETWEEN @start_ds AND @end_ds
        GROUP BY ds
        """,
    "big_days.sql": """
        MODEL (name {p}_shop.big_days);

        SELECT ds, total FROM {p}_shop.daily WHERE total > 0
        """,
}
CRASH_VIEWS = ("raw.events", "shop.daily", "shop.big_days")


def write_crash_project(folder: Path, prefix: str, url: str) -> Path:
    """Three models (FULL → daily incremental in 1-day batches → VIEW), schemas prefixed ``prefix_``."""
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text(connect_config(url))
    for file, text in CRASH_MODELS.items():
        (folder / "models" / file).write_text(textwrap.dedent(text).format(p=prefix))
    return folder


def view_checksums(engine, prefix: str, environment_schema_suffix: str = "") -> dict[str, tuple | None]:
    """Row count and an order-independent checksum of every column, per view; None for a missing view."""
    sums = {}
    for view in CRASH_VIEWS:
        schema, table = view.split(".")
        name = f"{prefix}_{schema}{environment_schema_suffix}.{table}"
        if not engine.view_exists(name):
            sums[view] = None
            continue
        sums[view] = tuple(
            engine.query_rows(f"SELECT COUNT(*), SUM(CAST(xxhash64(*) AS DECIMAL(38, 0))) FROM {name}")[0]
        )
    return sums
