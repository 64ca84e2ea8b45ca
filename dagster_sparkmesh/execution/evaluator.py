"""Evaluate one model over its missing intervals: its kind's write strategy (``execution.writes``), with retries.

Every strategy follows the same order (architecture invariants 3 and 4): make sure the physical table exists, write
the data for the interval batch, run the audits on it, and only then record the batch's intervals in the state
store. A crash anywhere leaves the intervals missing, so a re-run recomputes exactly them.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.results import ModelRunResult
from dagster_sparkmesh.execution.retry import with_retries
from dagster_sparkmesh.execution.session_changes import changes_session
from dagster_sparkmesh.execution.writes import strategy_for
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.snapshot.naming import physical_schema


def evaluate_model(ctx: ExecutionContext, target: ModelTarget) -> ModelRunResult:
    began = time.monotonic()
    write = strategy_for(target.model)
    if write is None or not target.intervals:
        return ModelRunResult(model=target.model.name, version=target.version, physical_table=target.table, skipped=True)
    # Strategies are idempotent per interval and record intervals after the data, so a transient failure can
    # simply run the write again (intervals it already recorded are rewritten identically).
    with model_session(ctx, target.model):
        ctx.engine.catalog.create_schema(physical_schema(target.model.name, target.model.catalog))
        result = with_retries(lambda: write(ctx, target), ctx.retry_policy)
    return ModelRunResult(
        model=target.model.name,
        version=target.version,
        physical_table=target.table,
        intervals=target.intervals,
        rows_written=result.rows,
        duration_seconds=round(time.monotonic() - began, 3),
        audits=result.audits,
        incomplete=tuple(sorted(set(result.incomplete))),
        kept=result.kept,
        warnings=result.warnings,
    )


def model_session(ctx: ExecutionContext, model: Model) -> AbstractContextManager[None]:
    """The Spark session as ``model``'s work needs it: its settings, alone on the session if it changes the session
    (``execution.session_changes``), shared otherwise."""
    return ctx.engine.catalog.session_settings(model.session_properties, alone=changes_session(model))
