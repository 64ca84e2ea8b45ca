"""What a write statement reports about itself: the rows it wrote, read from the executed command's SQL metrics.

An in-process session keeps the executed plan of ``spark.sql("INSERT ...")``: its write command counted the rows
while writing them, so asking costs nothing. Spark Connect sends no metrics for writes (only for the command's
empty result), so there the answer is None and the caller counts the table instead.
"""

from __future__ import annotations

from py4j.protocol import Py4JError
from pyspark.sql import DataFrame

OUTPUT_ROWS = "numOutputRows"
_WRITE_COMMAND = "org.apache.spark.sql.execution.command.DataWritingCommandExec"
# Adaptive execution wraps a command whose query has a join or an exchange: the final plan, then its result stage.
_UNWRAP = {
    "org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec": lambda node: node.executedPlan(),
    "org.apache.spark.sql.execution.adaptive.ResultQueryStageExec": lambda node: node.plan(),
}


def rows_written(result: DataFrame) -> int | None:
    """Rows written by the write command whose result is ``result``, or None when the session cannot tell."""
    java_frame = getattr(result, "_jdf", None)  # present on classic sessions only
    if java_frame is None:
        return None
    try:
        node = java_frame.queryExecution().executedPlan().commandPhysicalPlan()
        while node.getClass().getName() in _UNWRAP:
            node = _UNWRAP[node.getClass().getName()](node)
        if node.getClass().getName() != _WRITE_COMMAND:  # only the write command's count is the rows written
            return None
        metric = node.metrics().get(OUTPUT_ROWS)
        return int(metric.get().value()) if metric.isDefined() else None
    except Py4JError:  # not a command's result, or another plan shape: the caller counts
        return None
