"""What the benchmark scripts share: run one measurement in a fresh Python process, warm a session, print a table.

Each measurement runs in its own process because a JVM holds one local SparkContext and embedded Derby admits one
process: a fresh process is also how a CLI call or a Dagster run meets the code. A child prints one JSON object on
its last stdout line; everything else it prints (Spark's log lines) is ignored.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent


def user_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment as a user's shell has it: Python writes its bytecode caches. A sandbox that sets
    PYTHONDONTWRITEBYTECODE makes every process compile the package's ~170 modules again (0.15 s a command)."""
    return {key: value for key, value in {**os.environ, **(extra or {})}.items() if key != "PYTHONDONTWRITEBYTECODE"}


@dataclass(frozen=True)
class ChildRun:
    wall_s: float
    figures: dict


def run_child(script: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 1800) -> ChildRun:
    """Run ``python script args...`` and return its wall time and the JSON of its last stdout line."""
    began = time.perf_counter()
    result = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        cwd=REPO_DIR,
        env=user_environment(env),
    )
    wall = time.perf_counter() - began
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        raise SystemExit(f"{script.name} {' '.join(args)} failed ({result.returncode}):\n{result.stderr[-4000:]}")
    return ChildRun(wall_s=wall, figures=json.loads(lines[-1]))


def run_sparkmesh(project: Path, env: dict[str, str], *arguments: str, timeout: float = 3600) -> tuple[float, str]:
    """``sparkmesh -p project arguments...`` as a fresh process, as a user types it: (seconds, stdout); exits the
    benchmark with the command's output when it fails."""
    command = [str(Path(sys.executable).parent / "sparkmesh"), "-p", str(project), *arguments]
    began = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=False, env=user_environment(env), timeout=timeout)
    seconds = time.perf_counter() - began
    if result.returncode != 0:
        raise SystemExit(
            f"sparkmesh {' '.join(arguments)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return seconds, result.stdout


def in_workdir(keep: Path | None, prefix: str, run: Callable[[Path], None]) -> None:
    """``run(folder)`` in ``keep`` (emptied first, then kept) or in a temporary folder removed afterwards."""
    if keep is None:
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            run(Path(tmp))
        return
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir(parents=True)
    run(keep)


def emit(figures: dict) -> None:
    """A child's result: one JSON line, last on stdout."""
    print(json.dumps(figures, default=str), flush=True)


def warm_up(spark) -> None:
    """Start the JVM side of a session before timing: metastore connection, parquet writer, code generation.

    Every timed step gets the same warm-up, so that no step pays (or escapes) the 3-9 s first-use costs.
    """
    spark.sql("CREATE SCHEMA IF NOT EXISTS bench_warmup")
    spark.sql("DROP TABLE IF EXISTS bench_warmup.warm")
    spark.sql(
        "CREATE TABLE bench_warmup.warm USING parquet PARTITIONED BY (ds) AS "
        "SELECT id, DATE'2020-01-01' + CAST(id % 3 AS INT) AS ds FROM RANGE(1000)"
    )
    spark.sql("SELECT ds, COUNT(*) FROM bench_warmup.warm GROUP BY ds").collect()
    spark.sql("DROP TABLE bench_warmup.warm")


@dataclass(frozen=True)
class Row:
    what: str
    target: str
    measured: str
    verdict: str


def verdict(ok: bool | None) -> str:
    return "-" if ok is None else ("ok" if ok else "MISSED")


def print_table(title: str, rows: list[Row]) -> None:
    widths = [max(len(getattr(r, f)) for r in rows + [Row("what", "target", "measured", "verdict")]) for f in Row.__annotations__]
    header = Row("what", "target", "measured", "verdict")
    print(f"\n{title}; {local_filesystem()}")
    for row in [header, *rows]:
        print("  ".join(getattr(row, f).ljust(w) for f, w in zip(Row.__annotations__, widths)))


def local_filesystem() -> str:
    """Which filesystem local-master JVMs wrote through in this run: the figures differ by ~1.8x on partitioned
    writes (README, "Spark engine"), and a Java runtime without javac gets the slower one."""
    from dagster_sparkmesh.engine.local_filesystem import fork_free_settings
    from dagster_sparkmesh.engine.settings import require_java

    if fork_free_settings(require_java()):
        return "local filesystem: sparkmesh's fork-free one (a JDK's javac compiled it)"
    return "local filesystem: Hadoop's (this Java has no javac: slower partitioned writes)"
