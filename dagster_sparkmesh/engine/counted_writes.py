"""Writes that count their rows while writing them: one Spark job, in-process and over Spark Connect alike.

A write statement (``INSERT``, ``CREATE TABLE AS``) returns no row count, and every caller needs one (run reports,
the empty-write check of period tables). Counting the table afterwards is a second job (0.2-0.4 s each, a third
of a small model's write). An observation (``DataFrame.observe``) is an aggregate that the write's own tasks
compute over the rows they pass on; Spark hands it back with the command's result in an in-process session and
over Spark Connect alike, so the count costs no job. Tasks of a failed attempt do not add to it.

Should an observation not arrive (an in-process session delivers it through its listener bus, which may drop
events when overloaded) the caller gets None and counts the table, as before observations.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from dagster_sparkmesh.engine.failures import spark_errors
from dagster_sparkmesh.engine.partition_sql import column_list
from dagster_sparkmesh.engine.session import is_connect, query_frame
from dagster_sparkmesh.snapshot.naming import quote

_ROWS = "rows"
_CHECK = "check_{}"
_DELIVERY_WAIT_SECONDS = 30.0
"""How long an in-process session may take to deliver an observation after its write returned (measured: a few
milliseconds) before the caller counts instead."""


@dataclass
class RowChecks:
    """Conditions on single rows that a write counts on the rows it writes (``execution.row_checks``: audits):
    key (the caller's: an audit's position) → SQL condition, and, once the write delivered its counts, key → rows
    for which it holds."""

    conditions: Mapping[int, str]
    holding: dict[int, int] = field(default_factory=dict)


def insert_counting(
    spark: SparkSession, table: str, select_sql: str, *,
    counted: str | None = None, overwrite: bool = False, checks: RowChecks | None = None,
    kept_types: Mapping[str, str] | None = None,
) -> int | None:
    """``INSERT INTO`` (or, with ``overwrite``, a dynamic ``INSERT OVERWRITE``) ``table`` the rows of
    ``select_sql``, whose columns are in the table's order. Returns the rows written, or those for which the SQL
    predicate ``counted`` holds; None when the session did not report the count. ``checks`` are counted among
    those same rows; with ``kept_types`` (column → the table's type) only when the select's columns have those
    types, so that the table keeps the values as they were counted (else none is counted: ``checks.holding`` stays
    empty, and the caller audits the table)."""
    verb = "INSERT OVERWRITE" if overwrite else "INSERT INTO"
    with spark_errors(f"{verb} TABLE {quote(table)} {select_sql}"):
        frame = query_frame(spark, select_sql)
        if checks is not None and kept_types is not None and not _has_types(frame, kept_types):
            checks = None
        frame, observation = _observed(frame, counted, checks)
        frame.write.insertInto(quote(table), overwrite=overwrite)
    return _delivered(observation, checks)


def create_counting(
    spark: SparkSession, table: str, select_sql: str, partitioned_by: Sequence[str] = (), checks: RowChecks | None = None
) -> int | None:
    """``CREATE TABLE table USING parquet [PARTITIONED BY (...)] AS select_sql``, as one job that counts the rows
    it writes; None when the session did not report the count. Fails like the statement when the table exists
    (``TABLE_OR_VIEW_ALREADY_EXISTS``) or its folder does (``LOCATION_ALREADY_EXISTS``)."""
    partitions = f" PARTITIONED BY ({column_list(partitioned_by)})" if partitioned_by else ""
    with spark_errors(f"CREATE TABLE {quote(table)} USING parquet{partitions} AS {select_sql}"):
        frame, observation = _observed(query_frame(spark, select_sql), None, checks)
        writer = frame.write.format("parquet")
        if partitioned_by:
            writer = writer.partitionBy(*partitioned_by)
        writer.saveAsTable(quote(table), mode="error")
    return _delivered(observation, checks)


def observed_rows(frame: DataFrame) -> tuple[DataFrame, Observation]:
    """The frame counting its rows as they pass, for a writer of another kind (``engine.lakehouse_tables``); its
    count comes from ``count_observed`` after the write."""
    return _observed(frame, None, None)


def count_observed(observation: Observation) -> int | None:
    """The rows an ``observed_rows`` frame wrote, or None when the session did not report them."""
    return _delivered(observation, None)


def expression(frame: DataFrame, sql: str) -> Column:
    """A SQL expression as a column of the frame's kind: ``F.expr`` picks its kind from a process-wide flag that
    the first Spark Connect session sets, wrong for an in-process frame of the same process."""
    if is_connect(frame):
        from pyspark.sql.connect.functions import expr

        return expr(sql)
    return F.expr.__wrapped__(sql)


def _observed(
    frame: DataFrame, counted: str | None, checks: RowChecks | None
) -> tuple[DataFrame, Observation]:
    """The frame counting its rows as they pass (and the rows each check holds for), and the observation that
    receives the counts."""
    within = "TRUE" if counted is None else f"({counted})"
    metrics = {_ROWS: "COUNT(1)" if counted is None else f"COUNT_IF({counted})"}
    for index, condition in enumerate((checks.conditions if checks else {}).values()):
        metrics[_CHECK.format(index)] = f"COUNT_IF({within} AND ({condition}))"
    if is_connect(frame):
        from pyspark.sql.connect.observation import Observation as ConnectObservation

        observation = ConnectObservation()
    else:
        # ``Observation()`` picks its kind from a process-wide flag that the first Spark Connect session sets,
        # wrong for an in-process session opened in the same process: build the in-process one (and ``expression``).
        observation = object.__new__(Observation)
        observation.__init__()
    columns = [expression(frame, sql).alias(name) for name, sql in metrics.items()]
    return frame.observe(observation, *columns), observation


def _has_types(frame: DataFrame, kept_types: Mapping[str, str]) -> bool:
    """The frame's columns named in ``kept_types`` have those types (names and types compared in lower case)."""
    wanted = {name.lower(): data_type.lower() for name, data_type in kept_types.items()}
    found = {f.name.lower(): f.dataType.simpleString().lower() for f in frame.schema.fields if f.name.lower() in wanted}
    return found == wanted


def _delivered(observation: Observation, checks: RowChecks | None) -> int | None:
    """The observed row count, once delivered (None if it never is); the checks' counts go into ``checks``."""
    java = getattr(observation, "_jo", None)  # an in-process observation: wait for its delivery, never forever
    if java is not None:
        deadline = time.monotonic() + _DELIVERY_WAIT_SECONDS
        while not java.future().isCompleted():
            if time.monotonic() > deadline:
                return None
            time.sleep(0.002)
    try:
        values = observation.get
    except (PySparkException, Py4JError):  # delivered as a failure: the write succeeded, its counts are unknown
        return None
    if checks is not None:
        for index, key in enumerate(checks.conditions):
            if values.get(_CHECK.format(index)) is not None:
                checks.holding[key] = int(values[_CHECK.format(index)])
    return None if values.get(_ROWS) is None else int(values[_ROWS])
