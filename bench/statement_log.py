"""Time every Spark statement a step runs, on any thread: ``python bench/statement_log.py STEP PROJECT ...``
runs ``core_steps.py`` with ``SparkSession.sql`` and the DataFrame actions wrapped, then prints the statements
grouped by their first words (count, total seconds), the slowest ones, and the time outside Spark per model.
"""

from __future__ import annotations

import collections
import os
import re
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

RECORDS: list[tuple[str, str, float, float]] = []  # thread, statement, seconds, start (perf_counter)
TIMELINE = os.environ.get("STATEMENT_LOG_TIMELINE") == "1"  # also print every call in the order it started
_local = threading.local()


def _timed(kind, function):
    def wrapper(self, *args, **kwargs):
        if getattr(_local, "inside", False):
            return function(self, *args, **kwargs)
        _local.inside = True
        began = time.perf_counter()
        result = None
        try:
            result = function(self, *args, **kwargs)
            return result
        finally:
            _local.inside = False
            text = str(args[0]) if kind == "sql" and args else kind
            if kind.startswith("Catalog.") and args:
                text = f"{kind} {args[0]}"
            if kind == "sql" and result is not None:
                result._statement_log_text = text  # an action on this frame is labelled with its statement
            elif kind != "sql" and "_statement_log_text" in vars(self):  # (a Connect frame answers any attribute)
                text = f"{kind} of {self._statement_log_text}"
            RECORDS.append((threading.current_thread().name, text, time.perf_counter() - began, began))
    return wrapper


def _patch() -> None:
    from pyspark.sql.classic.dataframe import DataFrame
    from pyspark.sql.session import SparkSession

    from pyspark.sql.connect.dataframe import DataFrame as ConnectFrame
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    from pyspark.sql.connect.readwriter import DataFrameWriter as ConnectWriter
    from pyspark.sql.readwriter import DataFrameWriter

    for session, frame in ((SparkSession, DataFrame), (ConnectSession, ConnectFrame)):
        session.sql = _timed("sql", session.sql)
        for action in ("collect", "count", "persist", "createOrReplaceTempView"):
            setattr(frame, action, _timed(f"DataFrame.{action}", getattr(frame, action)))
    from pyspark.sql.catalog import Catalog
    from pyspark.sql.connect.catalog import Catalog as ConnectCatalog

    for catalog in (Catalog, ConnectCatalog):  # catalog calls are round trips too (existence, temp views)
        for name in ("tableExists", "dropTempView", "listTables", "listColumns", "databaseExists"):
            setattr(catalog, name, _timed(f"Catalog.{name}", getattr(catalog, name)))
    for writer in (DataFrameWriter, ConnectWriter):  # the counted writes (engine.counted_writes)
        for action in ("insertInto", "saveAsTable"):
            setattr(writer, action, _timed_write(action, getattr(writer, action)))


def _timed_write(action, function):
    """A DataFrameWriter action, labelled with the table it writes."""
    def wrapper(self, table, *args, **kwargs):
        began = time.perf_counter()
        try:
            return function(self, table, *args, **kwargs)
        finally:
            RECORDS.append((threading.current_thread().name, f"DataFrameWriter.{action} {table}", time.perf_counter() - began, began))
    return wrapper


def _group(text: str) -> str:
    words = re.sub(r"\s+", " ", text.strip()).split(" ")
    if words[0].startswith("DataFrameWriter."):
        return words[0].upper()
    head = " ".join(words[:5 if words[0].startswith("DataFrame.") else 3]).upper()
    if head.endswith("`") or "`" in head.split(" ")[-1]:  # DDL on a named table: one group per statement kind
        head = head.rsplit(" ", 1)[0]
    if "REBALANCE" in text:
        head += " (rebalanced)"
    return head[:60]


def main() -> None:
    _patch()
    try:
        if sys.argv[1] == "cli":  # a sparkmesh command in this process: statement_log.py cli -p DIR run ...
            from dagster_sparkmesh.cli.main import main as cli

            began = time.perf_counter()
            cli(sys.argv[2:], standalone_mode=False)
            print(f"command: {time.perf_counter() - began:.2f} s")
        else:
            import core_steps

            sys.argv = ["core_steps.py", *sys.argv[1:]]
            core_steps.main()
    finally:
        groups = collections.defaultdict(lambda: [0, 0.0])
        if TIMELINE:
            print("\ntimeline (start, seconds, thread, statement):")
            first = min((r[3] for r in RECORDS), default=0.0)
            for thread, text, seconds, began in sorted(RECORDS, key=lambda r: r[3]):
                flat = re.sub(r"\s+", " ", text)
                print(f"{began - first:7.2f} {seconds:6.2f}  {thread:24s} {flat[:110]}")
        for _, text, seconds, _began in RECORDS:
            groups[_group(text)][0] += 1
            groups[_group(text)][1] += seconds
        print(f"\n{len(RECORDS)} Spark calls, {sum(r[2] for r in RECORDS):.2f} s in all (threads overlap)")
        for head, (count, seconds) in sorted(groups.items(), key=lambda item: -item[1][1])[:40]:
            print(f"{seconds:8.2f} s {count:5d}  {head}")
        print("slowest:")
        for thread, text, seconds, _began in sorted(RECORDS, key=lambda r: -r[2])[:8]:
            flat = re.sub(r"\s+", " ", text)
            print(f"{seconds:8.2f} s  {thread}: {flat[:150]}")


if __name__ == "__main__":
    main()
