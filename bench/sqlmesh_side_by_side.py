"""The initial backfill side by side with SQLMesh, each a fresh process as a user types it:

    python bench/sqlmesh_side_by_side.py --sqlmesh VENV/bin/sqlmesh [--rounds 2] [--models 30] [--days 90]
        [--table-format iceberg|delta]

SQLMesh is no dependency of sparkmesh: install it with pyspark in a virtualenv of its own, outside the repository (it
pins another sqlglot), and pass its ``sqlmesh`` executable. Each round, on fresh copies of the generated project
(``generate_project.py``, SQLMesh's format), one after the other:

- the plain floor: a fresh process, JVM start included, one ``CREATE TABLE AS`` per model (``core_steps.py floor
  --cold``);
- ``sparkmesh plan prod --auto-apply``, in-process (``mode: local``) and with the default managed server, which the
  command starts (the server's shutdown after it is not timed);
- ``sqlmesh plan --auto-apply`` on a copy whose gateway is local Spark with the settings a SQLMesh user would write
  (local[2], UI off, 4 shuffle partitions, UTC, the Hive metastore and warehouse in the project folder) and its state
  in DuckDB: SQLMesh refuses Spark as a state store. A production plan takes no ``--start``; ``--execution-time``
  bounds it to the generated days.

Then, on the same folders, the daily run of one new day with rows (``side_by_side_daily.py``): the floor's plain
statements, ``sparkmesh run`` per mode, ``sqlmesh run``; and both tools' prod views compared row for row.

Each tool's time is printed with its ratio to the floor of its own round.

``--table-format``: the project's ``model_defaults`` ask for Iceberg (or Delta) tables, on both sides; the floor
writes tables of that format, and SQLMesh's session gets the same settings that serve the format as sparkmesh's
(``engine.lakehouse``: jars, extensions, session catalog).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from core_bench import MODE_WORKERS, backfill_process, backfill_window, floor_process, source_days
from generate_project import generate_project
from side_by_side_daily import (
    compare_rows, floor_daily_process, sparkmesh_daily_process, sparkmesh_digests, sqlmesh_daily_process,
    sqlmesh_digests,
)
from sqlmesh_spark.settings import EXTRA_CONFIG_VARIABLE, gateway_yaml
from dagster_sparkmesh.engine.standalone_cluster import free_port
from timing import Row, print_table, user_environment, verdict

SQLMESH_TIMEOUT_SECONDS = 1800
EXECUTED_BATCHES = re.compile(r"Executing model batches\W.*?(\d+)/(\d+) •")
"""SQLMesh's progress bar of the backfill (``Executing model batches ━━ 100.0% • 30/30 • 0:00:41``): executed /
planned. Its other bars (the virtual layer's) count views, not batches."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sqlmesh", type=Path, required=True, help="the sqlmesh executable of a separate virtualenv")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--table-format", choices=("iceberg", "delta"))
    args = parser.parse_args()
    if args.table_format:
        from dagster_sparkmesh.engine.lakehouse import lakehouse_settings

        os.environ[EXTRA_CONFIG_VARIABLE] = json.dumps(lakehouse_settings(args.table_format))
    with tempfile.TemporaryDirectory(prefix="sparkmesh_vs_sqlmesh_") as tmp:
        seconds = [one_round(Path(tmp) / f"round_{n}", args) for n in range(args.rounds)]
    print_table(f"initial backfill {args.models} x {args.days} and the daily run of one new day, whole fresh processes", _rows(seconds))


def one_round(folder: Path, args) -> dict[str, float]:
    start, end = backfill_window(args.days)
    window = ["--start", start.isoformat(), "--end", end.isoformat()]
    # As many models at once as the default engine (the managed server) and SQLMesh's concurrent_tasks write.
    workers = MODE_WORKERS["managed"]
    figures = {"floor": floor_process(folder / "floor", args, window, workers=workers, table_format=args.table_format)}
    figures["floor daily"] = floor_daily_process(folder / "floor", start, end, workers)
    for mode in ("local", "managed"):
        seconds, updated = backfill_process(folder / mode, args, start, end, mode, args.table_format)
        if updated != args.models:
            raise SystemExit(f"sparkmesh ({mode}) updated {updated} of {args.models} models")
        figures[f"sparkmesh {mode}"] = seconds
        figures[f"sparkmesh {mode} daily"], ran = sparkmesh_daily_process(folder / mode, end, mode, free_port())
        print(f"sparkmesh {mode} daily run: {ran}", flush=True)
    figures["sqlmesh"] = _sqlmesh_backfill(args.sqlmesh, folder / "sqlmesh", args, end)
    figures["sqlmesh daily"] = sqlmesh_daily_process(args.sqlmesh, folder / "sqlmesh", end)
    print(", ".join(f"{what} {value:.2f} s" for what, value in figures.items()), flush=True)
    theirs = sqlmesh_digests(folder / "sqlmesh", sorted(_model_names(folder / "local")))
    for mode in ("local", "managed"):
        equal, different = compare_rows(sparkmesh_digests(folder / mode), theirs)
        figures[f"rows equal {mode}"] = equal
        print(f"rows after the daily run, sparkmesh {mode} against sqlmesh: {equal}/{len(theirs)} models equal"
              + "".join(f"\n  {line}" for line in different), flush=True)
    figures["models"] = len(theirs)
    return figures


def _model_names(project: Path) -> list[str]:
    from dagster_sparkmesh.project.loader import load_project

    return list(load_project(project).models)


def _sqlmesh_backfill(sqlmesh: Path, project: Path, args, end: datetime) -> float:
    # The same files as sparkmesh's.
    generate_project(project, models=args.models, days=source_days(args), table_format=args.table_format)
    _use_local_spark(project)
    command = [str(sqlmesh), "plan", "--auto-apply", "--no-prompts", "--execution-time", end.date().isoformat()]
    began = time.perf_counter()
    result = subprocess.run(
        command, cwd=project, capture_output=True, text=True, env=user_environment(), check=False,
        timeout=SQLMESH_TIMEOUT_SECONDS,
    )
    seconds = time.perf_counter() - began
    batches = EXECUTED_BATCHES.search(result.stdout)
    complete = batches is not None and batches.group(1) == batches.group(2) and "Virtual layer updated" in result.stdout
    if result.returncode != 0 or not complete:
        raise SystemExit(f"sqlmesh failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return seconds


def _use_local_spark(project: Path) -> None:
    """The generated config's gateway, replaced by local Spark (its catalog in the project) with a DuckDB state."""
    config = project / "config.yaml"
    kept = config.read_text().split("default_gateway:", 1)[1]
    config.write_text(gateway_yaml(project / ".sqlmesh_bench") + f"default_gateway:{kept}")


def _rows(rounds: list[dict[str, float]]) -> list[Row]:
    rows = []
    for what in ("floor", "sparkmesh local", "sparkmesh managed", "sqlmesh"):
        rows.append(_phase_row(what, rounds, "floor"))
    rows += _share_rows(rounds, "", "initial backfill")
    for what in ("floor daily", "sparkmesh local daily", "sparkmesh managed daily", "sqlmesh daily"):
        rows.append(_phase_row(what, rounds, "floor daily"))
    for mode in ("local", "managed"):
        ratio = statistics.median(r[f"sparkmesh {mode} daily"] / r["floor daily"] for r in rounds)
        rows.append(Row(f"daily run, sparkmesh {mode} / floor", "<= 1.3x", f"{ratio:.2f}x", verdict(ratio <= 1.3)))
    rows += _share_rows(rounds, " daily", "daily run")
    for mode in ("local", "managed"):
        equal = min(int(r[f"rows equal {mode}"]) for r in rounds)
        models = int(rounds[0]["models"])
        rows.append(Row(f"rows after the daily run, sparkmesh {mode} = sqlmesh", "every model", f"{equal}/{models}",
                        verdict(equal == models)))
    return rows


def _phase_row(what: str, rounds: list[dict[str, float]], floor: str) -> Row:
    values = " / ".join(f"{r[what]:.2f}" for r in rounds)
    ratio = "" if what == floor else f" = {statistics.median(r[what] / r[floor] for r in rounds):.2f}x the floor (median)"
    return Row(what, "-", f"{values} s{ratio}", "-")


def _share_rows(rounds: list[dict[str, float]], suffix: str, phase: str) -> list[Row]:
    sqlmesh = statistics.median(r[f"sqlmesh{suffix}"] for r in rounds)
    rows = []
    for mode in ("local", "managed"):
        share = statistics.median(r[f"sparkmesh {mode}{suffix}"] / r[f"sqlmesh{suffix}"] for r in rounds)
        rows.append(Row(f"{phase}, sparkmesh {mode} / sqlmesh", "<= 0.5x", f"{share:.2f}x (sqlmesh {sqlmesh:.2f} s)",
                        verdict(share <= 0.5)))
    return rows


if __name__ == "__main__":
    sys.exit(main())
