"""The daily run as users live it: after the initial backfill, `sparkmesh run` for each new day, warm server.

    python bench/daily_run_bench.py [--models 30] [--days 365] [--new-days 2] [--keep DIR]

Generates the layered project with source data for ``days + new_days`` days (a new day has rows, as in life),
starts the project's managed Spark Connect server, backfills ``days`` days with ``sparkmesh plan prod
--auto-apply``, then runs ``sparkmesh run`` once per new day and once more for the last day (nothing left to do).
Each command is a fresh process, as a user types it. Printed per run: the command's time, the models and intervals
it ran, and the cost per model (each model's own duration from the run's output) split by kind. The server is
stopped at the end, by pid.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
from datetime import datetime, timedelta
from pathlib import Path

from generate_project import START, generate_project
from timing import Row, in_workdir, print_table, run_sparkmesh, verdict

from dagster_sparkmesh.engine.connect_server import stop_server
from dagster_sparkmesh.engine.standalone_cluster import free_port
from dagster_sparkmesh.project.loader import load_project

MODEL_LINE = re.compile(r"^\s+(\S+): \[[^)]*\) (\d+) rows in ([\d.]+) s", re.MULTILINE)
KEPT_LINE = re.compile(r"^\s+(\S+): inputs unchanged since its last write, table kept", re.MULTILINE)
RAN = re.compile(r"Ran (\d+) model\(s\): [^;]*")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--new-days", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    in_workdir(args.keep, "sparkmesh_daily_run_bench_", lambda folder: run(args, folder))


def run(args, workdir: Path) -> None:
    project = workdir / "project"
    generate_project(project, models=args.models, days=args.days + args.new_days)
    env = {**os.environ, "SPARKMESH_SPARK_MODE": "managed", "SPARKMESH_SPARK_CONNECT_PORT": str(free_port())}
    end = datetime.combine(START, datetime.min.time()) + timedelta(days=args.days)
    kinds = {name: model.kind_name for name, model in load_project(project).models.items()}
    rows = []
    try:
        run_sparkmesh(project, env, "spark", "start")
        backfill, _ = run_sparkmesh(project, env, "plan", "prod", "--auto-apply", "--execution-time", end.isoformat())
        rows.append(Row(f"initial backfill, {args.models} x {args.days} (CLI, warm server)", "-", f"{backfill:.2f} s", "-"))
        for day in range(1, args.new_days + 1):
            now = (end + timedelta(days=day)).isoformat()
            rows.append(_daily_row(project, env, now, kinds, f"daily run, new day {day}"))
        again, said = run_sparkmesh(project, env, "run", "--execution-time", now)
        nothing = "up to date" in said
        rows.append(Row("the same run again", "nothing to do", f"{again:.2f} s, nothing to do: {nothing}", verdict(nothing)))
    finally:
        stop_server(project)
    print_table(f"daily run: {args.models} models x {args.days} days, managed server (python {sys.version.split()[0]})", rows)


def _daily_row(project: Path, env: dict, now: str, kinds: dict[str, str], label: str) -> Row:
    seconds, said = run_sparkmesh(project, env, "run", "--execution-time", now)
    ran = RAN.search(said)
    per_model = [(name, int(rows), float(spent)) for name, rows, spent in MODEL_LINE.findall(said)]
    by_kind: dict[str, list[float]] = {}
    for name, _, spent in per_model:
        by_kind.setdefault(kinds.get(name, "?"), []).append(spent)
    costs = "; ".join(
        f"{kind} x{len(spent)}: mean {statistics.mean(spent):.2f} s, max {max(spent):.2f} s"
        for kind, spent in sorted(by_kind.items())
    )
    written = sum(rows for _, rows, _ in per_model)
    kept = len(KEPT_LINE.findall(said))  # FULL tables whose query and inputs had not changed: no job, no rows
    costs += f"; FULL kept x{kept}"
    print(f"{label}: {ran.group(0) if ran else said[-1500:]}; {written} rows; {costs}", flush=True)
    models = len(per_model) + kept
    return Row(label, "< 15 s, each model once", f"{seconds:.2f} s, {models} models, {written} rows; {costs}",
               verdict(seconds < 15 and models == len(kinds)))


if __name__ == "__main__":
    main()
