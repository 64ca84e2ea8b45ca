"""Dagster layer benchmark: definitions of a 1,000-model project, and a 365-partition backfill as one run.

    python bench/dagster_bench.py [--models 1000] [--days 365] [--rows-per-day 5000] [--keep DIR]

a. A fresh process imports dagster and dagster_sparkmesh, loads the generated N-model project
   (bench/generate_project.py) and builds ``build_sparkmesh_definitions`` (with the git sensor), then resolves the
   repository as a code-location load does. Cold = no parse cache, warm = the cache of the previous load.
b. A one-model project: an INCREMENTAL_BY_TIME_RANGE model whose query makes ~5k rows per day itself. In one fresh
   process with one warmed local session: one direct Spark ``INSERT OVERWRITE`` over the range (before and after,
   to expose warm-up bias), and one Dagster run of the same partition range (tags
   ``dagster/asset_partition_range_start/end``, ``dg.materialize``, in-process executor), on an instance with the
   stock SQLite event log and on one with ``BatchedSqliteEventLogStorage``; for each, Dagster's own floor: the same
   run of an asset doing nothing, over the range and over 365 partitions.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from datetime import date, datetime, timedelta
from pathlib import Path

from generate_project import CONFIG, generate_project
from timing import BENCH_DIR, Row, in_workdir, print_table, run_child, verdict

STEPS = BENCH_DIR / "dagster_steps.py"
START = date(2024, 1, 1)

ONE_MODEL = """MODEL (
  name bench.events,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column ds
  ),
  start '{start}',
  cron '@daily',
  grain (ds, id)
);

SELECT
  d.ds,
  k.id,
  CONCAT('c', CAST(PMOD(k.id, 7) AS STRING)) AS category,
  CAST(PMOD(HASH(d.ds, k.id), 10000) AS DOUBLE) / 100 AS amount
FROM (
  SELECT EXPLODE(SEQUENCE(CAST(@start_ds AS DATE), CAST(@end_ds AS DATE), INTERVAL 1 DAY)) AS ds
) AS d
CROSS JOIN (
  SELECT EXPLODE(SEQUENCE(1, {rows_per_day})) AS id
) AS k
"""



def one_model_project(out: Path, rows_per_day: int) -> Path:
    (out / "models" / "bench").mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(CONFIG.format(start=START.isoformat()))
    (out / "models" / "bench" / "events.sql").write_text(ONE_MODEL.format(start=START, rows_per_day=rows_per_day))
    return out


def bench_defs(workdir: Path, models: int) -> list[Row]:
    project = workdir / f"project_{models}"
    generate_project(project, models=models)
    shutil.rmtree(project / ".sparkmesh" / "cache", ignore_errors=True)
    rows = []
    for label in ("cold cache", "warm cache"):
        run = run_child(STEPS, "defs", str(project))
        f = run.figures
        total = f["load_seconds"] + f["build_seconds"]
        print(f"a. {label}: import {f['import_seconds']:.2f} s, load {f['load_seconds']:.2f} s, build "
              f"{f['build_seconds']:.2f} s, resolve {f['resolve_seconds']:.2f} s, process {run.wall_s:.2f} s, "
              f"{f['asset_keys']} asset keys")
        rows.append(Row(f"a. {models}-model project: load + build_sparkmesh_definitions ({label})", "< 5 s",
                        f"{total:.2f} s (+ resolve {f['resolve_seconds']:.2f} s, process {run.wall_s:.2f} s)",
                        verdict(total < 5)))
    return rows


def bench_range(workdir: Path, days: int, rows_per_day: int) -> list[Row]:
    rows = []
    for label, event_storage, options in RANGE_VARIANTS:
        project = one_model_project(workdir / f"one_model_{len(rows)}", rows_per_day)
        rows += _range_rows(project, days, rows_per_day, label, event_storage, options)
    return rows


# Dagster logs one "materialization planned" and one materialization event per partition of a ranged run. The
# stock SQLite event log stores each in transactions of its own; the batched store (an instance setting,
# dagster_sparkmesh.dagster.event_storage) stores the batches Dagster hands over in two transactions each, with
# the same records (a failed run's partitions still show as failed).
# The last variant also counts the rows of each of the 365 partitions (by default only runs of up to 92 partitions
# do: SparkMeshTranslatorSettings.partition_row_counts_up_to): one grouped count over the range after the write.
RANGE_VARIANTS = (
    ("stock instance", "stock", ()),
    ("batched store", "batched", ()),
    ("batched store, rows counted per partition", "batched", ("--count-all-partitions",)),
)


def _range_rows(
    project: Path, days: int, rows_per_day: int, label: str, event_storage: str, options: tuple[str, ...] = ()
) -> list[Row]:
    start = datetime.combine(START, datetime.min.time())
    end = start + timedelta(days=days)
    keys = [START.isoformat(), (START + timedelta(days=days - 1)).isoformat()]
    f = run_child(STEPS, "range", str(project), "--start", start.isoformat(), "--end", end.isoformat(),
                  "--first-key", keys[0], "--last-key", keys[1], "--event-storage", event_storage, *options).figures
    direct = min(f["direct_seconds"])
    total, floor_s, floor_365 = f["dagster_seconds"], f["dagster_floor_seconds"], f["dagster_floor_365_seconds"]
    step = f["sparkmesh_step_seconds"] or 0.0
    print(f"b. [{label}] direct INSERT OVERWRITE {f['direct_seconds'][0]:.2f} s then {f['direct_seconds'][1]:.2f} s "
          f"({f['direct_rows']} rows); Dagster run {total:.2f} s (sparkmesh step {step:.2f} s, the rest "
          f"{total - step:.2f} s); the same ranged run of an asset doing nothing {floor_s:.2f} s (365 partitions: "
          f"{floor_365:.2f} s); "
          f"success={f['success']}, {f['materializations']} materializations, {f['rows']} rows")
    if f["failure"]:
        print(f"b. the Dagster run failed: {f['failure']}")
    ok = f["success"] and f["materializations"] == days and f["rows"] == f["direct_rows"]
    return [
        Row(f"b. direct INSERT OVERWRITE, {days} days x {rows_per_day} rows", "-", f"{direct:.2f} s", "-"),
        Row(f"b. Dagster ranged run of {days} partitions (one run), {label}", "<= 1.3x direct",
            f"{total:.2f} s = {total / direct:.2f}x", verdict(ok and total <= 1.3 * direct)),
        Row("   the run's duration as the UI shows it (start to success; run creation not counted)", "-",
            f"{f['run_seconds']:.2f} s = {f['run_seconds'] / direct:.2f}x" if f["run_seconds"] else "-", "-"),
        Row("   of which the sparkmesh step (plan, table, write, intervals, lineage)", "-",
            f"{step:.2f} s = {step / direct:.2f}x", "-"),
        Row(f"   Dagster alone: the same run of a no-op asset ({days} partitions)", "-",
            f"{floor_s:.2f} s = {floor_s / direct:.2f}x", "-"),
        *([] if days == 365 else [Row("   Dagster alone: a ranged run of a no-op asset, 365 partitions", "-",
                                      f"{floor_365:.2f} s", "-")]),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--rows-per-day", type=int, default=5000)
    parser.add_argument("--only", choices=("defs", "range"))
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    in_workdir(args.keep, "sparkmesh_dagster_bench_", lambda folder: run(args, folder))


def run(args, workdir: Path) -> None:
    rows = []
    if args.only in (None, "defs"):
        rows += bench_defs(workdir, args.models)
    if args.only in (None, "range"):
        rows += bench_range(workdir, args.days, args.rows_per_day)
    print_table(f"dagster layer (python {sys.version.split()[0]})", rows)


if __name__ == "__main__":
    main()
