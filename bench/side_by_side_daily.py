"""The daily run of ``sqlmesh_side_by_side.py``: one new day with rows, after each tool's initial backfill, each a
fresh process as a user types it, and then the rows both tools' prod views hold, compared.

- the floor: a fresh process (JVM start included) running the new day's work as plain statements on the plain
  floor's tables (``floor.run_daily_floor``: each time-range model's day appended, each FULL model rebuilt);
- ``sparkmesh run --execution-time NEXT_MIDNIGHT`` in each engine mode; a managed server the command started is
  stopped after it and its stop counted, as the floor's JVM exit is;
- ``sqlmesh run --end DAY`` (SQLMesh's run takes no execution time; a date as its end includes that day);
- rows: every model's prod view reduced to a digest (``sqlmesh_spark.digest``: row count and order-independent
  checksums) in each tool's own catalog, read after the runs by a child process of this environment.

Also a script, for the reading child of SQLMesh's catalog: ``python side_by_side_daily.py read-sqlmesh FOLDER
MODEL...`` prints model -> digest as one JSON line.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from core_bench import RAN_LINE, STEPS, sparkmesh_process, stop_project_server
from timing import BENCH_DIR, run_child, user_environment

from sqlmesh_spark.digest import Digest, digest_table
from sqlmesh_spark.settings import local_spark_config

SQLMESH_BENCH_FOLDER = ".sqlmesh_bench"
"""Where ``sqlmesh_side_by_side._use_local_spark`` puts SQLMesh's catalog and state, in its project copy."""
SQLMESH_RUN_DONE = re.compile(r"Run finished|All model batches have been executed successfully")
READ_TIMEOUT_SECONDS = 900


def floor_daily_process(folder: Path, start: datetime, day: datetime, workers: int) -> float:
    """Seconds of a fresh process writing the new day ``[day, day + 1)`` on the plain floor in ``folder``."""
    window = ["--start", start.isoformat(), "--day", day.isoformat(), "--end", (day + timedelta(days=1)).isoformat()]
    return run_child(STEPS, "floor-daily", str(folder), *window, "--workers", str(workers)).wall_s


def sparkmesh_daily_process(project: Path, day: datetime, mode: str, port: int) -> tuple[float, str]:
    """(seconds, the run's summary line) of ``sparkmesh run`` for the new day, the server's stop included."""
    next_midnight = (day + timedelta(days=1)).isoformat()
    try:
        seconds, said = sparkmesh_process(project, port, "run", "--execution-time", next_midnight, mode=mode)
    except BaseException:
        stop_project_server(project)
        raise
    began = time.perf_counter()
    stop_project_server(project)
    ran = RAN_LINE.search(said)
    if ran is None or int(ran.group(3)) == 0:
        raise SystemExit(f"sparkmesh run ({mode}) wrote no rows for the new day:\n{said[-3000:]}")
    return seconds + time.perf_counter() - began, ran.group(0)


def sqlmesh_daily_process(sqlmesh: Path, project: Path, day: datetime) -> float:
    """Seconds of ``sqlmesh run`` for the new day (its own JVM, as every sqlmesh command has). Its end bounds the
    run: without one SQLMesh runs up to the wall clock."""
    command = [str(sqlmesh), "run", "--end", day.date().isoformat()]
    began = time.perf_counter()
    result = subprocess.run(command, cwd=project, capture_output=True, text=True, env=user_environment(),
                            check=False, timeout=1800)
    seconds = time.perf_counter() - began
    if result.returncode != 0 or not SQLMESH_RUN_DONE.search(result.stdout):
        raise SystemExit(f"sqlmesh run failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return seconds


def sparkmesh_digests(project: Path) -> dict[str, Digest | str]:
    """Every model's prod view in sparkmesh's catalog (the project's ``.sparkmesh/``), digested."""
    script = BENCH_DIR / "sqlmesh_spark" / "sparkmesh_build.py"
    env = {"SPARK_LOCAL_IP": "127.0.0.1"}
    return _digests_from(run_child(script, "read", str(project), env=env, timeout=READ_TIMEOUT_SECONDS))


def sqlmesh_digests(project: Path, models: list[str]) -> dict[str, Digest | str]:
    """The same models' prod views in SQLMesh's catalog (its project copy's local Spark), digested."""
    env = {"SPARK_LOCAL_IP": "127.0.0.1"}
    folder = str(project / SQLMESH_BENCH_FOLDER)
    return _digests_from(run_child(Path(__file__), "read-sqlmesh", folder, *models, env=env, timeout=READ_TIMEOUT_SECONDS))


def compare_rows(ours: dict[str, Digest | str], theirs: dict[str, Digest | str]) -> tuple[int, list[str]]:
    """(models whose rows are equal, a line per model that differs or could not be read)."""
    equal, different = 0, []
    for name in sorted(theirs):
        mine, other = ours.get(name), theirs[name]
        if isinstance(mine, Digest) and isinstance(other, Digest):
            same = (mine.rows, mine.column_checksums, mine.row_checksum) == (
                other.rows, other.column_checksums, other.row_checksum)
            equal += same
            if not same:
                different.append(f"{name}: {mine.rows} rows against SQLMesh's {other.rows}, checksums differ")
        else:
            different.append(f"{name}: sparkmesh {mine!r:.120}, sqlmesh {other!r:.120}")
    return equal, different


def _digests_from(child) -> dict[str, Digest | str]:
    return {name: Digest.from_json(value) if isinstance(value, dict) else value for name, value in child.figures.items()}


def _read_sqlmesh(folder: Path, models: list[str]) -> None:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in local_spark_config(folder).items():
        builder = builder.config(key, value)
    spark = builder.enableHiveSupport().getOrCreate()
    digests: dict[str, object] = {}
    try:
        for name in models:
            relation = ".".join(f"`{part}`" for part in name.split("."))
            try:
                digests[name] = digest_table(spark, relation).to_json()
            except Exception as error:  # noqa: BLE001 - an unreadable view is a finding
                digests[name] = f"{type(error).__name__}: {str(error).strip().splitlines()[0][:200]}"
    finally:
        spark.stop()
    print(json.dumps(digests), flush=True)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "read-sqlmesh":
        _read_sqlmesh(Path(sys.argv[2]), sys.argv[3:])
    else:
        sys.exit(__doc__)
