"""Backfill: compute the missing intervals of the selected models in DAG order, independent models in parallel."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dagster_sparkmesh.errors import ExecutionError, SparkMeshError
from dagster_sparkmesh.execution.abort import ApplyAborted, StopRequested
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.evaluator import evaluate_model, model_session
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.forward_only_columns import models_on_a_shared_table, widen_for_forward_only_change
from dagster_sparkmesh.execution.preflight import PreflightReport, run_preflight
from dagster_sparkmesh.execution.results import ModelRunResult
from dagster_sparkmesh.execution.scheduler import DagRunError, run_dag
from dagster_sparkmesh.execution.unbuilt_parents import check_parents_built
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.stages import Backfill
from dagster_sparkmesh.project.signals import check_missing_intervals
from dagster_sparkmesh.snapshot.records import Interval


def run_models(
    ctx: ExecutionContext,
    plan: Plan,
    stage: Backfill,
    *,
    on_model_done: Callable[[ModelRunResult], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    preflight: PreflightReport | None = None,
) -> list[ModelRunResult]:
    """Compute the backfill stage's intervals of its models (``stage.models``, default: all), then return what ran.

    ``execution.apply`` visits the stage after the plan's snapshots are pushed and its restatements applied; the
    stage carries its intervals (a Dagster step's window is its share of the plan's missing intervals). Models not
    selected are assumed up to date (Dagster orders its own steps); a failure stops the failed model's descendants
    and is raised once the independent models have finished. Once ``should_stop()`` turns true no model starts and
    running ones end at their next batch boundary: ``ApplyAborted`` is raised. The preflight (``execution.preflight``) runs first unless the caller ran it.
    """
    versions = {s.name: s.version for s in plan.environment_after.snapshots}
    # A plan of selected models (``--select-model``) leaves new unselected models out of the environment.
    selected = (set(stage.models) if stage.models is not None else set(ctx.project.models)) & versions.keys()
    intervals = {name: stage.intervals[name] for name in selected if stage.intervals.get(name)}
    if stage.models is not None:  # a Dagster step computes part of the plan: what it reads must exist
        check_parents_built(ctx.project, ctx.state, plan, stage.intervals, selected)
    if preflight is None:
        preflight = run_preflight(ctx, plan, intervals)
    tables = plan.tables(ctx.project.external_models)
    order = [name for name in ctx.project.models if name in selected]
    parents = {name: ctx.project.models[name].depends_on & selected for name in order}
    ready = check_missing_intervals(ctx.project.path, ctx.project.models, intervals)
    widened = models_on_a_shared_table(plan, ctx.state.get_environment(ctx.environment))
    window = Interval(start=plan.start, end=plan.end)

    def task(name: str) -> ModelRunResult:
        target = ModelTarget(
            model=ctx.project.models[name],
            version=versions[name],
            intervals=ready[name].ready if name in ready else (),
            table_for=tables,
            should_stop=should_stop,
            time_column_checked=name in preflight.time_columns_checked,
            first_query=preflight.first_queries.get(name),
            output_columns=preflight.output_columns.get(name),
            listed_absent=name in preflight.absent_tables,
            versions=versions,
            keep_unchanged=name not in plan.restatements,
        )
        if name in widened:
            with model_session(ctx, target.model):  # its query's types as its own write will see them
                widen_for_forward_only_change(ctx, target, window)
        result = evaluate_model(ctx, target)
        if name in ready and ready[name].not_ready:
            result = result.model_copy(update={"not_ready": ready[name].not_ready})
        if on_model_done:
            on_model_done(result)
        return result

    try:
        results = run_dag(parents, task, max_workers=ctx.max_workers, should_stop=should_stop)
    except DagRunError as failure:
        if all(isinstance(error, StopRequested) for error in failure.errors.values()):
            done = [failure.results[n] for n in order if n in failure.results]
            raise ApplyAborted(done, [n for n in order if n not in failure.results]) from None  # type: ignore[arg-type]
        raise BackfillFailed(failure, order, ctx.project.models) from next(iter(failure.errors.values()))
    if len(results) < len(order):  # the scheduler stops starting models only when a stop was requested
        raise ApplyAborted([results[n] for n in order if n in results], [n for n in order if n not in results])
    return [results[name] for name in order if name in results]


class BackfillFailed(ExecutionError):
    """Some models failed; ``results`` holds those that completed, ``blocked`` those not started because of it."""

    def __init__(self, failure: DagRunError, order: list[str], models: Mapping[str, Model]) -> None:
        self.errors: dict[str, BaseException] = failure.errors
        self.results: list[ModelRunResult] = [failure.results[n] for n in order if n in failure.results]  # type: ignore[misc]
        self.blocked = sorted(failure.blocked)
        failed = ", ".join(sorted(self.errors))
        name, first = next(iter(self.errors.items()))
        hint = f"not run, since a model they read failed: {', '.join(self.blocked)}" if self.blocked else None
        # Where to look: the failure's own place when it names one, else the failed model's file (and its header's
        # line for an error in that file with none of its own, such as a failing audit).
        model = models.get(name)
        own = first if isinstance(first, SparkMeshError) else None
        path = own.path if own is not None and own.path is not None else model.path if model else None
        line = own.line if own is not None and own.line is not None else model.line if model and path == model.path else None
        what = own.message if own is not None else str(first)
        hints = [text for text in (own.hint if own else None, hint) if text]
        super().__init__(f"backfill failed for {failed}: {what}", hint="; ".join(hints) or None, path=path, line=line,
                         snippet=own.snippet if own else None)
