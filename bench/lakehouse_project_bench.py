"""The generated project on lakehouse tables, whole processes as a user types them, against the floor of the same
format (issue 35's project targets):

    python bench/lakehouse_project_bench.py [--formats iceberg delta] [--models 30] [--days 90] [--keep DIR]

Per format, each a fresh process (JVM start and exit included), in local mode (two models at a time, and the floor
the same):

- initial backfill: the floor process (one ``CREATE TABLE ... USING <format> AS`` per model over the whole window,
  time-range models partitioned by their time column, in DAG order) right before ``sparkmesh plan prod
  --auto-apply`` on a fresh copy of the project with ``table_format`` in its ``model_defaults``;
- daily run of one new day with real rows: the floor's statements for that day on the floor written before (a
  time-range model's day appended, a FULL model's table overwritten) against ``sparkmesh run`` one day later.

Checked on our side: the backfill updated every model and the daily run wrote rows.
"""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from pathlib import Path

from core_bench import RAN_LINE, STEPS, backfill_process, backfill_window, floor_process
from timing import Row, in_workdir, print_table, run_child, run_sparkmesh, verdict

TARGET = 1.3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--formats", nargs="+", default=["iceberg", "delta"], choices=("iceberg", "delta"))
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    rows: list[Row] = []

    def run(workdir: Path) -> None:
        rows.extend(row for table_format in args.formats for row in _format_rows(workdir / table_format, args, table_format))

    in_workdir(args.keep, "sparkmesh-lakehouse-project-", run)
    print_table(f"{args.models} models x {args.days} days on lakehouse tables, whole processes, local mode", rows)


def _format_rows(workdir: Path, args, table_format: str) -> list[Row]:
    start, end = backfill_window(args.days)
    window = ["--start", start.isoformat(), "--end", end.isoformat()]
    floor = floor_process(workdir / "floor", args, window, workers=2, table_format=table_format)
    ours, updated = backfill_process(workdir / "project", args, start, end, "local", table_format)
    day_end = end + timedelta(days=1)
    floor_daily = run_child(
        STEPS, "floor-daily", str(workdir / "floor"), "--start", start.isoformat(), "--day", end.isoformat(),
        "--end", day_end.isoformat(), "--workers", "2",
    ).wall_s
    env = {"SPARKMESH_SPARK_MODE": "local"}
    daily, said = run_sparkmesh(workdir / "project", env, "run", "--execution-time", day_end.isoformat())
    ran = RAN_LINE.search(said)
    rows_written = int(ran.group(3)) if ran else 0
    print(f"{table_format}: backfill floor {floor:.2f} s, sparkmesh {ours:.2f} s ({updated} models updated); "
          f"daily floor {floor_daily:.2f} s, sparkmesh run {daily:.2f} s ({ran.group(0) if ran else said[-1500:]})")
    return [
        Row(f"{table_format}: initial backfill, whole processes", f"<= {TARGET}x its floor",
            f"{ours:.2f} s = {ours / floor:.2f}x the floor's {floor:.2f} s",
            verdict(ours / floor <= TARGET and updated == args.models)),
        Row(f"{table_format}: daily run of one new day with rows", f"<= {TARGET}x its floor",
            f"{daily:.2f} s = {daily / floor_daily:.2f}x the floor's {floor_daily:.2f} s, {rows_written} rows",
            verdict(daily / floor_daily <= TARGET and rows_written > 0)),
    ]


if __name__ == "__main__":
    sys.exit(main())
