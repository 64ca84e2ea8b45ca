"""The heap a long-lived Delta session keeps per table: N tables, each created and written twice (one day replaced
at a time), in one local session serving Delta; after every 30 tables, the time they took and the JVM's old
generation after a forced full collection (``jcmd GC.run``, ``jstat -gc``: Java's tools must be on PATH).

    .venv/bin/python bench/delta_log_cache.py [--tables 120] [--cache-size N]

``--cache-size``: ``spark.databricks.delta.delta.log.cacheSize`` for this run (default: the session's, which
sparkmesh sets in ``engine.lakehouse``). Delta's own default keeps up to 10,000 table logs for an hour.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=120)
    parser.add_argument("--cache-size", type=int)
    args = parser.parse_args()

    from pyspark.sql.functions import expr

    from dagster_sparkmesh.engine.session import close_sessions, open_session
    from dagster_sparkmesh.project.config import SparkConnection

    config = {"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false"}
    if args.cache_size is not None:
        config["spark.databricks.delta.delta.log.cacheSize"] = str(args.cache_size)
    connection = SparkConnection(mode="local", master="local[2]", config=config)
    spark = open_session(connection, Path(tempfile.mkdtemp(prefix="delta_log_cache_")), "delta")
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    print(f"log cache size: {spark.conf.get('spark.databricks.delta.delta.log.cacheSize', 'Delta default')}")
    try:
        spark.sql("CREATE DATABASE IF NOT EXISTS heap")
        block = time.monotonic()
        for number in range(1, args.tables + 1):
            _write_table(spark, f"heap.t{number}", expr)
            if number % 30 == 0 or number == args.tables:
                seconds = time.monotonic() - block
                print(f"{number} tables: the last ones in {seconds:.1f} s, old generation {_old_generation_mb(pid):.0f} MB")
                block = time.monotonic()
    finally:
        close_sessions()
    return 0


def _write_table(spark, table: str, expr) -> None:
    """Created with five days of rows, two of its days replaced, read once: what a daily model's table sees."""
    spark.sql(
        f"CREATE TABLE {table} USING delta PARTITIONED BY (ds) AS "
        "SELECT id, DATE '2024-01-01' + CAST(id % 5 AS INT) AS ds FROM range(50)"
    )
    for day in (1, 2):
        rows = spark.sql(f"SELECT id + 100 AS id, DATE '2024-01-0{day}' AS ds FROM range(10)")
        rows.writeTo(table).overwrite(expr(f"ds = DATE '2024-01-0{day}'"))
    spark.sql(f"SELECT COUNT(*) FROM {table}").collect()


def _old_generation_mb(pid: int) -> float:
    subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, check=True)
    header, values = subprocess.run(["jstat", "-gc", str(pid)], capture_output=True, text=True, check=True).stdout.split("\n")[:2]
    return float(dict(zip(header.split(), values.split()))["OU"]) / 1024


if __name__ == "__main__":
    sys.exit(main())
