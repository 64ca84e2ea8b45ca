"""Apply a plan: push snapshots, backfill what is missing, then promote (each step resumable on its own)."""

from __future__ import annotations

import getpass
import json
import socket
import time
from collections.abc import Callable

from dagster_sparkmesh.execution.backfill import run_models
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.promotion import promote
from dagster_sparkmesh.execution.results import ModelRunResult, PromotionResult
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.records import Record


class ApplyResult(Record):
    plan_id: str
    environment: str
    models: tuple[ModelRunResult, ...]
    promotion: PromotionResult | None
    duration_seconds: float

    @property
    def rows_written(self) -> int:
        return sum(m.rows_written for m in self.models)

    @property
    def intervals_processed(self) -> int:
        return sum(len(m.intervals) for m in self.models if not m.skipped)


def apply_plan(
    ctx: ExecutionContext,
    plan: Plan,
    *,
    promote_after: bool = True,
    on_model_done: Callable[[ModelRunResult], None] | None = None,
) -> ApplyResult:
    began = time.monotonic()
    _record_start(ctx, plan)
    outcome, metrics = "failed", {}
    try:
        models = run_models(ctx, plan=plan, on_model_done=on_model_done)
        promotion = promote(ctx, plan) if promote_after else None
        result = ApplyResult(
            plan_id=plan.plan_id,
            environment=ctx.environment,
            models=tuple(models),
            promotion=promotion,
            duration_seconds=round(time.monotonic() - began, 3),
        )
        outcome = "succeeded"
        metrics = {
            "duration_seconds": result.duration_seconds,
            "intervals_processed": result.intervals_processed,
            "rows_written": result.rows_written,
            "models_updated": sum(1 for m in models if not m.skipped),
        }
        return result
    except KeyboardInterrupt:
        outcome = "aborted"
        raise
    finally:
        _record_end(ctx, plan, outcome, metrics)


def _record_start(ctx: ExecutionContext, plan: Plan) -> None:
    summary = {"added": list(plan.added), "directly_modified": list(plan.directly_modified)}
    ctx.state.record_plan_start(
        plan.plan_id, ctx.environment, getpass.getuser(), socket.gethostname(), json.dumps(summary)
    )


def _record_end(ctx: ExecutionContext, plan: Plan, outcome: str, metrics: dict) -> None:
    ctx.state.record_plan_end(plan.plan_id, outcome, json.dumps(metrics))
