"""Where the partitioned layout's time goes: one table of N days, written and read in the ways that isolate a cost.

    python bench/partition_costs.py [--days 90] [--rows-per-day 1000] [--repeat 3]

One in-process session (local[2], the project's settings), a warm-up first, then each variant ``--repeat`` times
on a new table; the median is printed with the difference to the plain CTAS. The variants separate the causes
that the issue lists: files per task and partition (REBALANCE), metastore partition registration (a table whose
partitions the catalog does not track), the commit protocol (the ``_SUCCESS`` marker, committer algorithm 2),
listing on read (the parallel partition discovery threshold), and what coarser folders would buy (one partition
per month).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import SparkSession

from dagster_sparkmesh.engine.settings import session_settings
from dagster_sparkmesh.project.config import SparkConnection


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--rows-per-day", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sparkmesh_partition_costs_") as tmp:
        Bench(_session(Path(tmp)), args).run()


def _session(folder: Path) -> SparkSession:
    builder = SparkSession.builder.master("local[2]").appName("partition costs")
    for key, value in session_settings(SparkConnection(mode="local"), folder).items():
        builder = builder.config(key, value)
    return builder.enableHiveSupport().getOrCreate()


class Bench:
    def __init__(self, spark: SparkSession, args) -> None:
        self.spark, self.repeat, self.count = spark, args.repeat, 0
        rows = args.days * args.rows_per_day
        self.query = (
            f"SELECT id, CAST(id * 2 AS DOUBLE) AS amount, date_add(DATE'2024-01-01', CAST(id % {args.days} AS INT)) "
            f"AS ds FROM range({rows})"
        )
        self.label = f"{args.days} days x {args.rows_per_day} rows"
        self.floor = 0.0

    def run(self) -> None:
        q = self.query
        self.spark.sql(f"CREATE TABLE warm USING parquet AS {q}").collect()
        self.floor = self.measure("plain CTAS (the floor)", lambda t: [f"CREATE TABLE {t} USING parquet AS {q}"])
        day = lambda t: f"CREATE TABLE {t} (id BIGINT, amount DOUBLE, ds DATE) USING parquet PARTITIONED BY (ds)"
        self.measure("day partitions, INSERT OVERWRITE (before)", lambda t: [day(t), f"INSERT OVERWRITE TABLE {t} {q}"])
        rebalanced = f"SELECT /*+ REBALANCE(ds) */ * FROM ({q})"
        self.measure("day partitions + REBALANCE (one file per day)", lambda t: [day(t), f"INSERT OVERWRITE TABLE {t} {rebalanced}"])
        self.measure("  + partitions not tracked by the metastore", lambda t: [day(t), f"INSERT OVERWRITE TABLE {t} {rebalanced}"],
                     {"spark.sql.hive.manageFilesourcePartitions": "false"})
        self.measure("  + no _SUCCESS marker", lambda t: [day(t), f"INSERT OVERWRITE TABLE {t} {rebalanced}"],
                     {"mapreduce.fileoutputcommitter.marksuccessfuljobs": "false"})
        self.measure("  + committer algorithm 2", lambda t: [day(t), f"INSERT OVERWRITE TABLE {t} {rebalanced}"],
                     {"mapreduce.fileoutputcommitter.algorithm.version": "2"})
        self.measure("  INSERT INTO (append) instead of overwrite", lambda t: [day(t), f"INSERT INTO {t} {rebalanced}"])
        month = f"SELECT id, amount, ds, date_format(ds, 'yyyy-MM') AS month FROM ({q})"
        self.measure("month partitions (a hidden period column)", lambda t: [
            f"CREATE TABLE {t} (id BIGINT, amount DOUBLE, ds DATE, month STRING) USING parquet PARTITIONED BY (month)",
            f"INSERT OVERWRITE TABLE {t} SELECT /*+ REBALANCE(month) */ * FROM ({month})",
        ])
        self.spark.sql(day("parent")).collect()
        self.spark.sql(f"INSERT OVERWRITE TABLE parent {rebalanced}").collect()
        self.measure("read: count of the plain table", lambda t: ["SELECT COUNT(*) FROM warm"])
        self.measure("read: count of the day-partitioned table", lambda t: ["SELECT COUNT(*) FROM parent WHERE ds >= DATE'2024-01-01'"])
        self.measure("  + listing on the driver (discovery threshold 10000)",
                     lambda t: ["SELECT COUNT(*) FROM parent WHERE ds >= DATE'2024-01-01'"],
                     {"spark.sql.sources.parallelPartitionDiscovery.threshold": "10000"})

    def measure(self, what: str, statements: Callable[[str], list[str]], settings: dict[str, str] | None = None) -> float:
        for key, value in (settings or {}).items():
            self.spark.conf.set(key, value)
        times = []
        for _ in range(self.repeat):
            self.count += 1
            began = time.perf_counter()
            for statement in statements(f"t{self.count}"):
                self.spark.sql(statement).collect()
            times.append(time.perf_counter() - began)
        for key in settings or {}:
            self.spark.conf.unset(key)
        median = statistics.median(times)
        extra = f"{median / self.floor:.1f}x floor" if self.floor else ""
        print(f"{what:55s} {median:6.2f} s  {extra:12s} runs: {' '.join(f'{t:.2f}' for t in times)}", flush=True)
        return median


if __name__ == "__main__":
    main()
