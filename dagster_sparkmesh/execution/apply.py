"""The plan evaluator: visits a plan's stages (``plan.stages``), for the CLI and for Dagster alike.

Every entry point runs plans through ``PlanEvaluator.evaluate``: ``sparkmesh plan`` (every stage), ``sparkmesh
run`` (all but the promotion), ``sparkmesh rollback`` (the promotion of a rollback plan), a Dagster step (the
backfill stage narrowed to its partitions) and the promotion asset (the promotion). So the plan is stored, its
snapshots pushed once, the preflight run and the plan log written in one place:

- the plan is stored under its id first (``plan.stored``), so a Dagster run and its promotion can name it;
- the preflight checks the inputs of the models to compute before anything is written: a refused plan writes
  nothing, not even its plan-log row;
- one plan-log row per evaluation: succeeded, failed, aborted (a requested stop, see ``execution.abort``: completed
  intervals stay recorded and nothing is promoted) or waiting (signals held intervals back).
"""

from __future__ import annotations

import getpass
import json
import socket
import time
from collections.abc import Callable, Sequence
from datetime import datetime

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.abort import ApplyAborted
from dagster_sparkmesh.execution.backfill import BackfillFailed, run_models
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.crashpoints import crashpoint
from dagster_sparkmesh.execution.environment_statements import run_after_all, run_before_all
from dagster_sparkmesh.execution.preflight import PreflightReport, run_preflight
from dagster_sparkmesh.execution.promotion import promote
from dagster_sparkmesh.execution.results import AuditResult, ModelRunResult, PromotionResult
from dagster_sparkmesh.execution.standalone_audits import run_standalone_audits
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.ranged import backfill_in_window
from dagster_sparkmesh.plan.stages import (
    AfterAll,
    Backfill,
    BeforeAll,
    CreateSnapshots,
    Promote,
    Stage,
    StandaloneAudits,
    create_snapshots,
    plan_stages,
    standalone_audit_stages,
)
from dagster_sparkmesh.plan.stored import ensure_stored, is_prepared
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.records import Interval


class ApplyResult(Record):
    plan_id: str
    environment: str
    models: tuple[ModelRunResult, ...]
    promotion: PromotionResult | None
    duration_seconds: float
    audits: tuple[AuditResult, ...] = ()
    """The standalone audits the plan ran: passed, or failed without blocking (warnings)."""
    external_audits: tuple[tuple[str, AuditResult], ...] = ()
    """(external model, result) of the audits of the externals the backfill read (checked by the preflight)."""

    @property
    def rows_written(self) -> int:
        return sum(m.rows_written for m in self.models)

    @property
    def intervals_processed(self) -> int:
        return sum(len(m.intervals) for m in self.models if not m.skipped)


class NotReady(ExecutionError):
    """Signals held some intervals back: everything ready was computed, and the environment waits for the rest."""


def apply_plan(
    ctx: ExecutionContext,
    plan: Plan,
    *,
    promote_after: bool = True,
    on_model_done: Callable[[ModelRunResult], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> ApplyResult:
    """Apply every stage of ``plan`` (without the promotion unless ``promote_after``)."""
    evaluator = PlanEvaluator(ctx, plan, on_model_done=on_model_done, should_stop=should_stop)
    return evaluator.evaluate(plan_stages(plan, promote=promote_after))


def backfill_window(
    ctx: ExecutionContext,
    plan: Plan,
    models: Sequence[str] | None,
    start: datetime | None,
    end: datetime | None,
    *,
    on_model_done: Callable[[ModelRunResult], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    log: dict[str, object] | None = None,
) -> ApplyResult:
    """A Dagster step: ``plan``'s backfill stage for ``models`` over ``[start, end)`` (the whole plan window when
    None), preparing the plan first if no step did yet. No plan is built here."""
    prepared = is_prepared(ctx.state, plan.plan_id)
    stage = backfill_in_window(
        plan, ctx.project, ctx.state, models=models, start=start, end=end, now=ctx.clock(), prepared=prepared
    )
    evaluator = PlanEvaluator(ctx, plan, on_model_done=on_model_done, should_stop=should_stop, log=log)
    return evaluator.evaluate([BeforeAll(), create_snapshots(plan), stage, AfterAll()])


def promote_plan(ctx: ExecutionContext, plan: Plan, *, log: dict[str, object] | None = None) -> PromotionResult:
    """The promotion stage of ``plan`` (a Dagster promotion, a rollback), preparing the plan if nothing did yet."""
    # A promotion of its own (Dagster's promotion asset) runs the plan's standalone audits first, as a plan does.
    stages = [create_snapshots(plan), *standalone_audit_stages(plan), Promote()]
    result = PlanEvaluator(ctx, plan, log=log).evaluate(stages)
    assert result.promotion is not None  # the Promote stage ran, or evaluate raised
    return result.promotion


class PlanEvaluator:
    """Visits stages of one plan in order; ``log`` adds to the plan-log row's summary (e.g. the Dagster run)."""

    def __init__(
        self,
        ctx: ExecutionContext,
        plan: Plan,
        *,
        on_model_done: Callable[[ModelRunResult], None] | None = None,
        should_stop: Callable[[], bool] = lambda: False,
        log: dict[str, object] | None = None,
    ) -> None:
        self.ctx = ctx
        self.plan = plan
        self.on_model_done = on_model_done
        self.should_stop = should_stop
        self.log = log or {}
        self.models: list[ModelRunResult] = []
        self.promotion: PromotionResult | None = None
        self.audits: tuple[AuditResult, ...] = ()
        self._preflight: PreflightReport | None = None

    def evaluate(self, stages: Sequence[Stage]) -> ApplyResult:
        began = time.monotonic()
        backfill = next((s for s in stages if isinstance(s, Backfill)), None)
        if backfill is not None:  # before anything is written: a refused plan leaves no trace
            self._preflight = run_preflight(self.ctx, self.plan, _to_compute(backfill))
        ensure_stored(self.ctx.state, self.plan)
        self._record_start(stages)
        outcome = "failed"
        try:
            for stage in stages:
                self._visit(stage)
            outcome = "succeeded"
        except (ApplyAborted, KeyboardInterrupt) as stopped:
            outcome = "aborted"
            if isinstance(stopped, ApplyAborted):
                self.models = list(stopped.results)
            raise
        except BackfillFailed as failure:
            self.models = list(failure.results)
            raise
        except NotReady:
            outcome = "waiting"
            raise
        finally:
            self._record_end(outcome, time.monotonic() - began, stages)
        return ApplyResult(
            plan_id=self.plan.plan_id,
            environment=self.ctx.environment,
            models=tuple(self.models),
            promotion=self.promotion,
            audits=self.audits,
            external_audits=self._preflight.external_audits if self._preflight else (),
            duration_seconds=round(time.monotonic() - began, 3),
        )

    def _visit(self, stage: Stage) -> None:
        if isinstance(stage, BeforeAll):
            run_before_all(self.ctx, self.plan)
        elif isinstance(stage, CreateSnapshots):
            self._create_snapshots(stage)
        elif isinstance(stage, Backfill):
            self._backfill(stage)
        elif isinstance(stage, StandaloneAudits):
            self.audits = run_standalone_audits(self.ctx, self.plan, stage.names)
        elif isinstance(stage, Promote):
            _check_ready(self.ctx, self.models)
            self.promotion = promote(self.ctx, self.plan)
        elif isinstance(stage, AfterAll):
            run_after_all(self.ctx, self.plan)

    def _create_snapshots(self, stage: CreateSnapshots) -> None:
        self.ctx.state.prepare_plan(self.plan.plan_id, self.plan.new_snapshots, stage.restatements)
        crashpoint("push_snapshots")

    def _backfill(self, stage: Backfill) -> None:
        self.models = run_models(
            self.ctx,
            self.plan,
            stage,
            on_model_done=self.on_model_done,
            should_stop=self.should_stop,
            preflight=self._preflight,
        )
        if self.should_stop():  # asked during the last model: still leave the environment untouched
            raise ApplyAborted(self.models, [])

    def _record_start(self, stages: Sequence[Stage]) -> None:
        summary = {
            "added": list(self.plan.added),
            "directly_modified": list(self.plan.directly_modified),
            "stages": [stage.stage for stage in stages],
            **self.log,
        }
        self.ctx.state.record_plan_start(
            self.plan.plan_id, self.ctx.environment, getpass.getuser(), socket.gethostname(), json.dumps(summary)
        )

    def _record_end(self, outcome: str, seconds: float, stages: Sequence[Stage]) -> None:
        metrics: dict[str, object] = {}
        if any(isinstance(stage, Backfill) for stage in stages):
            computed = [m for m in self.models if not m.skipped]
            metrics["intervals_processed"] = sum(len(m.intervals) for m in computed)
            metrics["rows_written"] = sum(m.rows_written for m in computed)
            metrics["models_updated"] = len(computed)
        if self.promotion is not None:
            metrics["views_changed"] = len(self.promotion.views)
        metrics["duration_seconds"] = round(seconds, 3)
        self.ctx.state.record_plan_end(self.plan.plan_id, outcome, json.dumps(metrics))


def _to_compute(stage: Backfill) -> dict[str, tuple[Interval, ...]]:
    """The stage's intervals of its selected models: what the preflight checks before anything is written."""
    return {
        name: intervals for name, intervals in stage.intervals.items()
        if intervals and (stage.models is None or name in stage.models)
    }


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
