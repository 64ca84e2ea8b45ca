"""What a lakehouse table's writes cost against the bare statement of the same format (issue 35's targets).

    python bench/lakehouse_bench.py --format iceberg|delta [--days 365] [--rows-per-day 1000] [--new-days 5]

One process, one local session serving the format (``engine.lakehouse``), one INCREMENTAL_BY_TIME_RANGE model
over an external table of ``days + new_days`` days with real rows:

- backfill: the model's ``days`` days through the Python API (plan, one batch write, record, promotion) against
  the floor: one ``CREATE TABLE ... USING <format> PARTITIONED BY (ds) AS`` of the same rows;
- interval write: each new day as a daily run writes it (the evaluator's write of that one interval: the commit,
  the record of the interval) against the floor: the same day's rows overwritten by filter into the floor table,
  one ``writeTo(...).overwrite(condition)``, timed the same way. Medians and ratios printed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

START = datetime(2024, 1, 1)


def _project(root: Path, table_format: str) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "config.yaml").write_text(
        f"model_defaults:\n  dialect: spark\n  start: '{START.date()}'\n  table_format: {table_format}\n"
    )
    (root / "external_models.yaml").write_text(
        "- name: src.events\n  columns: {id: bigint, ds: date, customer: bigint, amount: double}\n"
    )
    (root / "models" / "events.sql").write_text(
        "MODEL (name b.events, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));\n"
        "SELECT id, ds, customer, amount, amount * 1.2 AS gross FROM src.events WHERE ds BETWEEN @start_ds AND @end_ds"
    )
    return root


def _source(spark, days: int, rows_per_day: int) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS src")
    spark.sql(
        "CREATE TABLE src.events USING parquet PARTITIONED BY (ds) AS SELECT id, customer, amount, ds FROM ("
        f"SELECT id, DATE '{START.date()}' + CAST(id DIV {rows_per_day} AS INT) AS ds, id % 997 AS customer, "
        f"CAST(id % 1000 AS DOUBLE) / 10 AS amount FROM range({days * rows_per_day}))"
    )


def _timed(action) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", required=True, choices=("iceberg", "delta"))
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--rows-per-day", type=int, default=1000)
    parser.add_argument("--new-days", type=int, default=5)
    args = parser.parse_args()

    from dagster_sparkmesh.engine.lakehouse_tables import overwrite_where
    from dagster_sparkmesh.execution import backfill
    from dagster_sparkmesh.execution.apply import apply_plan
    from dagster_sparkmesh.execution.context import ExecutionContext
    from dagster_sparkmesh.execution.plans import plan_for
    from dagster_sparkmesh.project.config import SparkConnection

    work = Path(tempfile.mkdtemp(prefix="sparkmesh-lakehouse-bench-"))
    try:
        project = _project(work / "project", args.format)
        end = START + timedelta(days=args.days)
        connection = SparkConnection(mode="local", master="local[2]")
        ctx = ExecutionContext.open(project, "prod", connection=connection, clock=lambda: end)
        spark = ctx.engine.catalog.spark
        _source(spark, args.days + args.new_days, args.rows_per_day)
        spark.sql("SELECT COUNT(*) FROM src.events").collect()  # the source is read once before anything is timed
        # The format's first writes in a JVM load its classes and compile its code: paid here, by neither side (with
        # 10 rows only, the backfill timed first paid ~1 s of it and the floor after it none).
        spark.sql(f"CREATE TABLE warm_up USING {args.format} PARTITIONED BY (ds) AS SELECT * FROM src.events")
        spark.sql("DROP TABLE warm_up")

        backfill_s = _timed(lambda: apply_plan(ctx, plan_for(ctx, None)))
        select = "SELECT id, ds, customer, amount, amount * 1.2 AS gross FROM src.events"
        floor_backfill_s = _timed(lambda: spark.sql(
            f"CREATE TABLE floor_events USING {args.format} PARTITIONED BY (ds) AS {select} WHERE ds < DATE '{end.date()}'"
        ))

        ours, floor = [], []
        evaluate = backfill.evaluate_model

        def timed_evaluate(context, target):
            began = time.perf_counter()
            result = evaluate(context, target)
            ours.append(time.perf_counter() - began)
            return result

        backfill.evaluate_model = timed_evaluate
        try:
            for offset in range(args.new_days):
                day = end + timedelta(days=offset)
                day_ctx = dataclasses.replace(ctx, clock=lambda now=day + timedelta(days=1): now)
                apply_plan(day_ctx, plan_for(day_ctx, None))
                condition = f"ds >= DATE '{day.date()}' AND ds < DATE '{(day + timedelta(days=1)).date()}'"
                floor.append(_timed(lambda c=condition: overwrite_where(spark, "floor_events", f"{select} WHERE {c}", c)))
        finally:
            backfill.evaluate_model = evaluate
        rows = spark.sql("SELECT COUNT(*) FROM b.events").collect()[0][0]
        figures = {
            "format": args.format, "days": args.days, "rows_per_day": args.rows_per_day, "rows_in_view": rows,
            "backfill_s": round(backfill_s, 3), "floor_backfill_s": round(floor_backfill_s, 3),
            "backfill_ratio": round(backfill_s / floor_backfill_s, 2),
            "interval_write_median_s": round(statistics.median(ours), 3),
            "floor_interval_median_s": round(statistics.median(floor), 3),
            "interval_ratio": round(statistics.median(ours) / statistics.median(floor), 2),
            "interval_writes_s": [round(value, 3) for value in ours],
            "floor_writes_s": [round(value, 3) for value in floor],
        }
        print(json.dumps(figures))
        ctx.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
