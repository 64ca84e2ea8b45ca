"""Commands that compute data: ``plan`` and ``run``, and the context every state-touching command opens.

Each command opens an ``ExecutionContext`` (``open_context``) whose Spark engine starts on first use only: a plan
with nothing to do never starts a JVM. The work itself is done by
``dagster_sparkmesh.execution``; this module asks, prints and exits.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.text import Text

from dagster_sparkmesh.cli.context import CliContext, pass_cli_context
from dagster_sparkmesh.cli.time_arguments import is_date_only, parse_time
from dagster_sparkmesh.errors import PlanError

if TYPE_CHECKING:  # the execution package is imported inside the commands, to keep `--help` fast
    from dagster_sparkmesh.engine.adapter import SparkEngine
    from dagster_sparkmesh.execution.context import ExecutionContext
    from dagster_sparkmesh.model.records import Model
    from dagster_sparkmesh.plan.definition import Plan
    from dagster_sparkmesh.project.records import Project
    from dagster_sparkmesh.snapshot.records import Environment

PROD = "prod"


@contextmanager
def open_context(
    context: CliContext, environment: str, execution_time: datetime | None = None
) -> Iterator[ExecutionContext]:
    """The execution context of a command; the state store is closed when the command ends.

    ``execution_time``: the command's "now" (SQLMesh's ``--execution-time``): which intervals are complete, due by
    cron, and what the default end of a plan is."""
    from dagster_sparkmesh.execution.context import ExecutionContext

    project = context.project()
    ctx = ExecutionContext.open(
        project.path, environment, project=project,
        engine_factory=context.engine_factory or _project_engine(project),
        clock=(lambda: execution_time) if execution_time is not None else None,
    )
    try:
        yield ctx
    finally:
        ctx.state.close()
        if context.engine_factory is None and ctx.engine_started:
            # Stop the session we opened before the interpreter exits: a Spark Connect session left to the garbage
            # collector at shutdown closes its gRPC channel from __del__ and can hang the process forever.
            from dagster_sparkmesh.engine.session import close_sessions

            close_sessions()


def _project_engine(project: Project) -> Callable[[], SparkEngine]:
    def open_engine() -> SparkEngine:
        from dagster_sparkmesh.cli.spark_commands import connection_for
        from dagster_sparkmesh.engine.adapter import SparkEngine
        from dagster_sparkmesh.engine.session import open_session
        from dagster_sparkmesh.model.table_formats import project_lakehouse_format

        # Decided only now: looking for a running server imports pyspark, which a no-op plan never needs.
        connection = connection_for(project.path, project.config.connection)
        return SparkEngine(open_session(connection, project.path, project_lakehouse_format(project.models.values())))

    return open_engine


def plan_window(
    start: str | None, end: str | None, now: datetime | None = None
) -> tuple[datetime | None, datetime | None]:
    """``--start``/``--end`` as datetimes; an end given as a date includes that day (SQLMesh's meaning); a relative
    one (``1 day ago``) is read against ``now``, the command's execution time."""
    start_at = parse_time(start, "--start", now=now) if start else None
    end_at = parse_time(end, "--end", now=now) if end else None
    if end_at is not None and is_date_only(end):
        end_at += timedelta(days=1)
    return start_at, end_at


def _refuse_end_after(end: str | None, now: datetime) -> None:
    """SQLMesh's rule: a plan may not end after its execution time (an end given as a date: that day's midnight).
    Its last intervals would not be complete, and an interval once recorded is not computed again."""
    if end and parse_time(end, "--end", now=now) > now:
        raise click.BadParameter(
            f"{end} is after the execution time ({now:%Y-%m-%d %H:%M:%S} UTC): a plan computes no interval that "
            "ends after it. Give an end at or before it, leave --end out (the default is the execution time), or "
            "set --execution-time",
            param_hint="--end",
        )


EXECUTION_TIME = click.option(
    "--execution-time",
    help="Act as if it were this time (date or timestamp, UTC): which intervals are complete and due. Default: now.",
)


def _execution_time(text: str | None) -> datetime | None:
    return parse_time(text, "--execution-time") if text else None


def make_console() -> Console:
    """Rich output; when piped (CI logs, ./dev demo) wider than rich's 80 columns so that diffs are not cut."""
    width = None if sys.stdout.isatty() else 160
    return Console(highlight=False, soft_wrap=True, width=width)


@click.command()
@click.argument("environment", required=False)
@click.option("--start", help="Start of the window (YYYY-MM-DD or timestamp). Default: the earliest model start.")
@click.option("--end", help="End of the window; a date includes that day. Default: now.")
@click.option("--forward-only", is_flag=True, help="Reuse the current physical tables; changes apply going forward.")
@click.option(
    "--restate-model",
    "restate_models",
    multiple=True,
    help="Recompute these models (and their descendants): a name, a wildcard (db*), tag:NAME, +upstream, downstream+.",
)
@click.option(
    "--select-model",
    "select_models_",
    multiple=True,
    help="Plan only these models' changes (same selectors); the others keep the environment's snapshots.",
)
@click.option("--effective-from", help="With --forward-only: in prod, recompute the changed models from this date.")
@click.option(
    "--include-unmodified", is_flag=True, default=None,
    help="A development environment gets a view of every model, not only of the changed ones "
    "(config: plan.include_unmodified).",
)
@click.option("--auto-apply", is_flag=True, help="Apply without asking.")
@click.option("--no-prompts", is_flag=True, help="Never ask; without --auto-apply the plan is only shown.")
@click.option("--explain", is_flag=True, help="Print what applying would do, and change nothing.")
@click.option("--skip-tests", is_flag=True, help="Do not run the unit tests of the models the plan changes first.")
@EXECUTION_TIME
@pass_cli_context
def plan(
    context: CliContext,
    environment: str | None,
    start: str | None,
    end: str | None,
    forward_only: bool,
    restate_models: tuple[str, ...],
    select_models_: tuple[str, ...],
    effective_from: str | None,
    include_unmodified: bool | None,
    auto_apply: bool,
    no_prompts: bool,
    explain: bool,
    skip_tests: bool,
    execution_time: str | None,
) -> None:
    """Compare the project with ENVIRONMENT (default: the config's default_target_environment, else prod), show the
    changes, and apply them. The unit tests of the models it adds or changes run first, and a failing one stops the
    plan, as in SQLMesh (--skip-tests)."""
    if environment is None:  # (an empty name given is refused as any bad name)
        environment = context.project().config.default_target_environment
    from dagster_sparkmesh.cli.plan_view import explain_steps, plan_tree
    from dagster_sparkmesh.execution.plans import plan_for
    from dagster_sparkmesh.plan.selectors import select_models

    plan_window(start, end)  # a malformed --start or --end is refused before anything opens
    console = make_console()
    with open_context(context, environment, _execution_time(execution_time)) as ctx:
        _refuse_end_after(end, ctx.clock())
        start_at, end_at = plan_window(start, end, ctx.clock())
        restated = select_models(ctx.project.models, restate_models) if restate_models else ()
        options = {
            "forward_only": forward_only,
            "restate_models": restated,
            "selected": select_models(ctx.project.models, select_models_) if select_models_ else None,
            "effective_from": parse_time(effective_from, "--effective-from") if effective_from else None,
            "include_unmodified": include_unmodified or None,
        }
        the_plan = plan_for(ctx, start_at, end_at, **options)
        if the_plan.uncategorized:
            categories = _categories_for(the_plan, no_prompts, console)
            the_plan = plan_for(ctx, start_at, end_at, categories=categories, **options)
        if the_plan.is_noop:
            console.print(f"No changes to plan: project files match the `{the_plan.environment}` environment")
            return
        if not skip_tests:
            _refuse_failing_tests(ctx, the_plan, console)
        console.print(plan_tree(the_plan))
        if explain:
            console.print(Text("Explanation: applying this plan would", style="bold"))
            current = ctx.state.get_environment(the_plan.environment)
            for number, step in enumerate(explain_steps(the_plan, current), start=1):
                console.print(f"  {number}. {step}")
            return
        if not auto_apply and (no_prompts or not _confirm(the_plan)):
            console.print("Plan not applied")
            return
        apply_with_progress(ctx, the_plan, console)


def _refuse_failing_tests(ctx: ExecutionContext, the_plan: Plan, console: Console) -> None:
    from dagster_sparkmesh.execution.unit_tests import failing_tests_of_changes

    passed = failing_tests_of_changes(ctx, the_plan)
    if passed:
        console.print(f"{passed} unit test(s) of the changed models passed")


def _categories_for(the_plan: Plan, no_prompts: bool, console: Console) -> dict:
    """Ask breaking / non-breaking for every change the categorizer could not judge; never guess silently."""
    from dagster_sparkmesh.cli.plan_view import diff_text
    from dagster_sparkmesh.snapshot.records import ChangeCategory

    if no_prompts:
        raise PlanError(
            f"{len(the_plan.uncategorized)} change(s) could not be categorized automatically",
            snippet="\n".join(the_plan.uncategorized),
            hint="run `sparkmesh plan` without --no-prompts to choose breaking or non-breaking for each",
        )
    answers = {}
    for name in the_plan.uncategorized:
        console.print(f"[bold]{name}[/bold]: this change could not be categorized automatically")
        console.print(diff_text(the_plan.direct_changes[name].diff))
        answer = click.prompt(
            f"{name}: [b]reaking (recompute it and its children) or [n]on-breaking (recompute it only)",
            type=click.Choice(["b", "n"], case_sensitive=False),
            show_choices=False,
        )
        answers[name] = ChangeCategory.BREAKING if answer.lower() == "b" else ChangeCategory.NON_BREAKING
    return answers


def _confirm(the_plan: Plan) -> bool:
    what = "Backfill Tables" if the_plan.requires_backfill else "Virtual Update"
    answer = click.prompt(
        f"Apply - {what} [y/n]", type=click.Choice(["y", "n"], case_sensitive=False), show_choices=False
    )
    return answer.lower() == "y"


def apply_with_progress(ctx: ExecutionContext, the_plan: Plan, console: Console) -> None:
    """Apply with a progress bar; Ctrl-C stops between models (``ApplyAborted``, exit code 130), twice at once."""
    from dagster_sparkmesh.cli.plan_view import apply_summary, model_progress
    from dagster_sparkmesh.execution.abort import run_until_stopped
    from dagster_sparkmesh.execution.apply import apply_plan

    def on_stop() -> None:
        console.print("[yellow]Stopping after the models in progress (Ctrl-C again to quit at once)[/yellow]")

    if the_plan.requires_backfill:
        with model_progress(console, total=len(ctx.project.models)) as on_model_done:
            result = run_until_stopped(
                lambda stop: apply_plan(ctx, the_plan, on_model_done=on_model_done, should_stop=stop), on_stop=on_stop
            )
    else:
        result = run_until_stopped(lambda stop: apply_plan(ctx, the_plan, should_stop=stop), on_stop=on_stop)
    console.print(apply_summary(result))


@click.command()
@click.argument("environment", required=False)
@click.option(
    "--select-model",
    "select_models_",
    multiple=True,
    help="Run only these models (same selectors as plan) and the models upstream of them.",
)
@EXECUTION_TIME
@pass_cli_context
def run(context: CliContext, environment: str | None, select_models_: tuple[str, ...], execution_time: str | None) -> None:
    """Compute the intervals that became due (by cron) for ENVIRONMENT's current models (default: the config's
    default_target_environment, else prod); promote nothing new."""
    if environment is None:  # (an empty name given is refused as any bad name)
        environment = context.project().config.default_target_environment
    from dagster_sparkmesh.cli.plan_view import audits_text, missing_interval_lines, model_progress, run_summary
    from dagster_sparkmesh.execution.abort import run_until_stopped
    from dagster_sparkmesh.execution.apply import apply_plan
    from dagster_sparkmesh.execution.plans import plan_for
    from dagster_sparkmesh.execution.scheduled_restatements import last_looks, record_looks
    from dagster_sparkmesh.plan.standalone_audits import with_standalone_audits

    console = make_console()
    with open_context(context, environment, _execution_time(execution_time)) as ctx:
        current = existing_environment(ctx, environment)
        selected = _with_upstream(ctx.project.models, select_models_) if select_models_ else None
        # An environment planned with an explicit end is a bounded preview: it does not grow past that end.
        # Forward-only previews keep their start (a preview grows with time, never back to the environment start).
        # A run of prod restates the models whose auto_restatement_cron ticked since the last run looked.
        the_plan = plan_for(ctx, current.start, current.end or ctx.clock(), preview_start=current.preview_start,
                            looked_for_restatements=last_looks(ctx, current))
        if the_plan.has_changes:
            raise PlanError(
                f"the project differs from the `{environment}` environment",
                snippet="\n".join(_changed_models(the_plan)),
                hint=f"`sparkmesh plan {environment}` first: run only computes the environment's current models",
            )
        if selected is not None:
            missing = {n: i for n, i in the_plan.missing_intervals.items() if n in selected}
            narrowed = the_plan.model_copy(update={"missing_intervals": missing})
            # Only the standalone audits reading the selected models' new data run (``plan.standalone_audits``).
            the_plan = with_standalone_audits(narrowed, ctx.project, current)
        if not the_plan.missing_intervals:
            record_looks(ctx, the_plan, selected, nothing_to_do=True)
            scope = "the selected models of " if selected is not None else ""
            console.print(f"Every interval of {scope}`{environment}` is up to date (as of {the_plan.end:%Y-%m-%d %H:%M})")
            return
        for name, span in the_plan.scheduled_restatements.items():
            console.print(f"  {name}: restated on its auto_restatement_cron, {span.start:%Y-%m-%d %H:%M} to {span.end:%Y-%m-%d %H:%M}")
        for line in missing_interval_lines(the_plan):
            console.print(f"  {line}")
        began = time.monotonic()
        with model_progress(console, total=len(ctx.project.models)) as on_model_done:
            try:
                # Ctrl-C stops between models and batches, as for plan (ApplyAborted, exit code 130).
                applied = run_until_stopped(
                    lambda stop: apply_plan(
                        ctx, the_plan, promote_after=False, on_model_done=on_model_done, should_stop=stop
                    )
                )
            finally:  # once prepared, what the run restated stays missing until computed, whatever happens next
                record_looks(ctx, the_plan, selected)
        computed = [r for r in applied.models if not r.skipped]
        console.print(run_summary(computed, ctx.project.models, time.monotonic() - began))
        if applied.audits:  # standalone audits over the models that got data
            console.print(audits_text(applied.audits))


def _with_upstream(models: Mapping[str, Model], selectors: Sequence[str]) -> tuple[str, ...]:
    """The selected models and every model upstream of them: a model must never be computed from stale parents."""
    from dagster_sparkmesh.plan.selectors import select_models

    chosen = select_models(models, selectors)
    return select_models(models, [f"+{name}" for name in chosen])


def existing_environment(ctx: ExecutionContext, name: str) -> Environment:
    current = ctx.state.get_environment(name)
    if current is None:
        known = ", ".join(e.name for e in ctx.state.list_environments()) or "none yet"
        raise PlanError(
            f"environment `{name}` does not exist (environments: {known})",
            snippet=name,
            hint=f"create it with `sparkmesh plan {name}`",
        )
    return current


def _changed_models(the_plan: Plan) -> list[str]:
    groups = (
        ("added", the_plan.added),
        ("removed", the_plan.removed),
        ("directly modified", the_plan.directly_modified),
        ("indirectly modified", the_plan.indirectly_modified),
        ("metadata only", the_plan.metadata_only),
        ("standalone audits changed", the_plan.changed_audits),
    )
    return [f"{label}: {', '.join(names)}" for label, names in groups if names]


COMMANDS = (plan, run)
