"""Apply a plan: push snapshots, backfill what is missing, then promote (each step resumable on its own)."""

from __future__ import annotations

import getpass
import json
import socket
import time
from collections.abc import Callable

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.abort import ApplyAborted
from dagster_sparkmesh.execution.backfill import BackfillFailed, run_models
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.environment_statements import run_after_all, run_before_all
from dagster_sparkmesh.execution.preflight import run_preflight
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
    should_stop: Callable[[], bool] = lambda: False,
) -> ApplyResult:
    """Apply ``plan`` and record the attempt in the plan log: succeeded, failed, or aborted.

    The preflight (``execution.preflight``) checks the inputs of the models to compute first: a refused plan
    writes nothing, not even its plan-log row. A requested stop (``should_stop``, see ``execution.abort``) ends the
    apply between models or interval batches with ``ApplyAborted``: completed intervals stay recorded and nothing is
    promoted, so the environment is as it was and applying again resumes.
    """
    began = time.monotonic()
    # Before the plan-log row: a plan refused on its inputs leaves the state store exactly as it was.
    checked = run_preflight(ctx, plan, plan.models_to_compute())
    _record_start(ctx, plan)
    outcome = "failed"
    models: list[ModelRunResult] = []
    try:
        run_before_all(ctx, plan)
        models = run_models(ctx, plan=plan, on_model_done=on_model_done, should_stop=should_stop, preflight=checked)
        if should_stop():  # asked during the last model: still leave the environment untouched
            raise ApplyAborted(models, [])
        if promote_after:
            _check_ready(ctx, models)
        promotion = promote(ctx, plan) if promote_after else None
        run_after_all(ctx, plan)
        outcome = "succeeded"
        return ApplyResult(
            plan_id=plan.plan_id,
            environment=ctx.environment,
            models=tuple(models),
            promotion=promotion,
            duration_seconds=round(time.monotonic() - began, 3),
        )
    except ApplyAborted as aborted:
        outcome, models = "aborted", aborted.results
        raise
    except KeyboardInterrupt:
        outcome = "aborted"
        raise
    except BackfillFailed as failure:
        models = failure.results
        raise
    except NotReady:
        outcome = "waiting"
        raise
    finally:
        metrics = _metrics(models, time.monotonic() - began)
        _record_end(ctx, plan, outcome, metrics)


class NotReady(ExecutionError):
    """Signals held some intervals back: everything ready was computed, and the environment waits for the rest."""


def _check_ready(ctx: ExecutionContext, models: list[ModelRunResult]) -> None:
    held = {m.model: m.not_ready for m in models if m.not_ready}
    if not held:
        return
    lines = [
        f"{name}: {len(pairs)} interval(s) not ready, first [{pairs[0][0].start:%Y-%m-%d %H:%M}, "
        f"{pairs[0][0].end:%Y-%m-%d %H:%M}) (signal {pairs[0][1]})"
        for name, pairs in sorted(held.items())
    ]
    raise NotReady(
        f"not promoting {ctx.environment}: signals report {len(held)} model(s) not ready",
        snippet="\n".join(lines),
        hint="everything ready was computed and recorded; plan again once the signals report the rest ready "
        "(no view was changed)",
    )


def _metrics(models: list[ModelRunResult], seconds: float) -> dict:
    computed = [m for m in models if not m.skipped]
    return {
        "duration_seconds": round(seconds, 3),
        "intervals_processed": sum(len(m.intervals) for m in computed),
        "rows_written": sum(m.rows_written for m in computed),
        "models_updated": len(computed),
    }


def _record_start(ctx: ExecutionContext, plan: Plan) -> None:
    summary = {"added": list(plan.added), "directly_modified": list(plan.directly_modified)}
    ctx.state.record_plan_start(
        plan.plan_id, ctx.environment, getpass.getuser(), socket.gethostname(), json.dumps(summary)
    )


def _record_end(ctx: ExecutionContext, plan: Plan, outcome: str, metrics: dict) -> None:
    ctx.state.record_plan_end(plan.plan_id, outcome, json.dumps(metrics))
