"""The batches of a time-range model's missing intervals, as every time-range strategy walks them: a requested stop
honoured between batches, each batch's query rendered, the time column checked before the first write."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dagster_sparkmesh.execution.abort import StopRequested
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.crashpoints import crashpoint
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.preflight import check_time_column
from dagster_sparkmesh.execution.writes.queries import select_for
from dagster_sparkmesh.plan.intervals import batches
from dagster_sparkmesh.snapshot.records import Interval


@dataclass(frozen=True)
class IntervalBatch:
    interval: Interval
    """From the batch's first interval's start to its last one's end."""
    unit_intervals: tuple[Interval, ...]
    """The model's own intervals inside it: what its commit records."""
    query: str


def interval_batches(ctx: ExecutionContext, target: ModelTarget, batch_size: int | None) -> Iterator[IntervalBatch]:
    for number, batch in enumerate(batches(list(target.intervals), batch_size)):
        if number and target.should_stop():
            raise StopRequested(target.model.name)
        unit_intervals = tuple(i for i in target.intervals if batch.start <= i.start and i.end <= batch.end)
        query = select_for(ctx, target, batch)
        if not number and not target.time_column_checked:
            check_time_column(ctx.engine, target.model, query)  # its inputs exist only now: before any write
        crashpoint("interval_write")
        yield IntervalBatch(interval=batch, unit_intervals=unit_intervals, query=query)
