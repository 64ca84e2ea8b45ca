"""What one incremental model's one-day write costs, alone on a warm engine, and what it is made of.

    python bench/interval_write_bench.py [--models 12] [--days 90] [--new-days 4] [--mode managed|local] [--keep DIR]

Generates the layered project (``generate_project.py``) with source rows for ``days + new_days`` days, backfills
``days`` days through the Python API, then applies one plan per new day with one model at a time (no other write
competes: the figure is the write's own cost, not a share of two cores). For every INCREMENTAL_BY_TIME_RANGE model
of each new day: its time in the evaluator (rows written, audits, the record of its interval), and the Spark calls
it made (statements and DataFrame actions, from a wrapper of the session). The floor of the same work: the model's
rendered query for that day appended to a plain table partitioned by day, one statement, timed the same way.
Printed: per new day and in total, the median and the maximum of the write, of the floor, their ratio, and the
calls per write grouped by their first words.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generate_project import START, generate_project  # noqa: E402 (sibling script)
from timing import local_filesystem, warm_up  # noqa: E402 (sibling script)


@dataclasses.dataclass
class Calls:
    """Every Spark call of the session, by the model being written when it was made."""

    current: str | None = None
    by_model: dict[str, list[str]] = dataclasses.field(default_factory=lambda: collections.defaultdict(list))

    def wrap(self, spark) -> None:
        original = spark.sql

        def sql(statement, *args, **kwargs):
            if self.current is not None:
                self.by_model[self.current].append(" ".join(str(statement).split()[:2]).upper())
            return original(statement, *args, **kwargs)

        spark.sql = sql


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=12)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--new-days", type=int, default=4)
    parser.add_argument("--mode", default="managed", choices=("managed", "local"))
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="interval_write_"))
    try:
        return run(args, workdir)
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)


def run(args, workdir: Path) -> int:
    from dagster_sparkmesh.engine.connect_server import stop_server
    from dagster_sparkmesh.engine.standalone_cluster import free_port

    project = workdir / "project"
    generate_project(project, models=args.models, days=args.days + args.new_days)
    try:
        return _measure(args, project, free_port())
    finally:
        if args.mode == "managed":
            stop_server(project)


def _measure(args, project: Path, port: int) -> int:
    from dagster_sparkmesh.execution.apply import apply_plan
    from dagster_sparkmesh.execution.context import ExecutionContext
    from dagster_sparkmesh.execution.plans import plan_for
    from dagster_sparkmesh.project.loader import load_project

    loaded = load_project(project)
    connection = loaded.config.connection.model_copy(update={"mode": args.mode, "connect_port": port})
    end = datetime.combine(START, datetime.min.time()) + timedelta(days=args.days)
    ctx = ExecutionContext.open(project, "prod", project=loaded, connection=connection, clock=lambda: end)
    warm_up(ctx.engine.spark)
    began = time.perf_counter()
    apply_plan(ctx, plan_for(ctx, None))
    print(f"backfill {args.models} x {args.days}: {time.perf_counter() - began:.1f} s ({args.mode}; {local_filesystem()})",
          flush=True)
    incremental = {n for n, m in loaded.models.items() if m.kind_name == "INCREMENTAL_BY_TIME_RANGE"}
    calls = Calls()
    calls.wrap(ctx.engine.spark)
    writes, floors, counts = [], [], collections.Counter()
    for day in range(1, args.new_days + 1):
        now = end + timedelta(days=day)
        day_ctx = dataclasses.replace(ctx, clock=lambda now=now: now, max_workers=1)
        plan = plan_for(day_ctx, None)
        done = _apply_one_at_a_time(day_ctx, plan, calls, apply_plan)
        day_writes = [(seconds, rows) for name, (seconds, rows) in done.items() if name in incremental]
        day_floors = [_floor(day_ctx, plan, name, now) for name in sorted(incremental)]
        for name in incremental:
            counts.update(calls.by_model.pop(name, []))
        writes += [seconds for seconds, _ in day_writes]
        floors += day_floors
        rows = sum(r for _, r in day_writes)
        print(f"new day {day}: {len(day_writes)} one-day writes, {rows} rows; write median "
              f"{statistics.median(s for s, _ in day_writes):.3f} s (max {max(s for s, _ in day_writes):.3f}), "
              f"floor median {statistics.median(day_floors):.3f} s", flush=True)
    per_write = sum(counts.values()) / max(len(writes), 1)
    print(f"all new days: {len(writes)} writes; write median {statistics.median(writes):.3f} s, max "
          f"{max(writes):.3f} s; floor median {statistics.median(floors):.3f} s; ratio of medians "
          f"{statistics.median(writes) / statistics.median(floors):.2f}x; target < 0.5 s")
    print(f"Spark calls per write: {per_write:.1f} (" + ", ".join(
        f"{text} {n / max(len(writes), 1):.1f}" for text, n in counts.most_common(12)) + ")")
    ctx.close()
    return 0


def _apply_one_at_a_time(ctx, plan, calls: Calls, apply_plan) -> dict[str, tuple[float, int]]:
    """Apply the day's plan one model at a time; (seconds in the evaluator, rows) per computed model."""
    from dagster_sparkmesh.execution import backfill

    done: dict[str, tuple[float, int]] = {}
    evaluate = backfill.evaluate_model

    def timed(model_ctx, target):
        calls.current = target.model.name
        try:
            result = evaluate(model_ctx, target)
        finally:
            calls.current = None
        if not result.skipped:
            done[target.model.name] = (result.duration_seconds, result.rows_written)
        return result

    backfill.evaluate_model = timed
    try:
        apply_plan(ctx, plan)
    finally:
        backfill.evaluate_model = evaluate
    return done


def _floor(ctx, plan, name: str, now: datetime) -> float:
    """The day's rows of ``name`` inserted into a plain day-partitioned table: one statement, nothing else."""
    from dagster_sparkmesh.execution.model_target import ModelTarget
    from dagster_sparkmesh.execution.writes.queries import rendered_query
    from dagster_sparkmesh.snapshot.records import Interval

    model = ctx.project.models[name]
    day = Interval(start=now - timedelta(days=1), end=now)
    target = ModelTarget(model=model, version=plan.version_of(name), intervals=(day,),
                         table_for=plan.tables(ctx.project.external_models))
    query = rendered_query(ctx, target, day)
    table = f"bench_floor.{name.replace('.', '__')}"
    spark = ctx.engine.spark
    spark.sql("CREATE SCHEMA IF NOT EXISTS bench_floor")
    time_column = model.kind.time_column
    spark.sql(f"CREATE TABLE IF NOT EXISTS {table} USING parquet PARTITIONED BY ({time_column}) "
              f"AS SELECT * FROM ({query}) AS q WHERE 1 = 0")
    began = time.perf_counter()
    spark.sql(f"INSERT INTO {table} BY NAME SELECT * FROM ({query}) AS q")
    return time.perf_counter() - began


if __name__ == "__main__":
    sys.exit(main())
