"""Scale: the initial backfill of a large generated project, in a fresh process, per engine mode.

    python bench/scale_bench.py [--models 300] [--days 365] [--modes local managed] [--driver-memory 4g] [--keep DIR]

Each mode gets its own copy of the project (own catalog and state) and runs ``plan prod`` + ``apply_plan``
(bench/core_steps.py ``apply``) over every day. Printed: the whole apply, time per model (mean and median of the
models' own durations; models run two at a time), and the driver JVM's peak heap (local mode: the Connect server's
JVM is not visible from the client). ``managed`` starts the project's Connect server first and stops it after.
"""

from __future__ import annotations

import argparse
import json
import statistics
from datetime import datetime, timedelta
from pathlib import Path

from generate_project import START, generate_project
from timing import BENCH_DIR, Row, in_workdir, print_table, run_child

from dagster_sparkmesh.engine.connect_server import stop_server
from dagster_sparkmesh.engine.standalone_cluster import free_port

STEPS = BENCH_DIR / "core_steps.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=300)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--modes", nargs="+", default=["local"], choices=("local", "managed"))
    parser.add_argument("--driver-memory", default="4g", help="spark.driver.memory of the session or server")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    in_workdir(args.keep, "sparkmesh_scale_bench_", lambda folder: run(args, folder))


def run(args, workdir: Path) -> None:
    start = datetime.combine(START, datetime.min.time())
    window = ["--start", start.isoformat(), "--end", (start + timedelta(days=args.days)).isoformat()]
    rows = []
    for mode in args.modes:
        project = workdir / mode
        generate_project(project, models=args.models, days=args.days)
        env = {"SPARKMESH_SPARK_CONF": json.dumps({"spark.driver.memory": args.driver_memory})}
        try:
            child = run_child(STEPS, "apply", str(project), *window, "--mode", mode, "--port", str(free_port()), env=env)
        finally:
            stop_server(project)
        figures = child.figures
        durations = figures["durations"]
        heap = f"{figures['peak_heap_mb']:.0f} MB" if figures.get("peak_heap_mb") else "n/a (Connect)"
        print(f"{mode}: {len(figures['written'])} tables, apply {figures['apply_seconds']:.1f} s, "
              f"slowest {figures['slowest']}", flush=True)
        rows.append(Row(
            f"{args.models} models x {args.days} days, {mode}",
            "completes; heap < 4 GB",
            f"{figures['seconds']:.1f} s (process {child.wall_s:.1f} s); per model: mean "
            f"{statistics.mean(durations):.2f} s, median {statistics.median(durations):.2f} s; peak heap {heap}",
            "ok",  # apply_plan raises when a model fails: reaching here is completing
        ))
    print_table(f"scale: initial backfill ({args.models} models x {args.days} days)", rows)


if __name__ == "__main__":
    main()
