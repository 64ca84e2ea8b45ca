"""Commands that change data or state: ``plan``, ``run``, ``environments``, ``invalidate``, ``janitor``,
``rollback`` and ``plans``.

Each command opens an ``ExecutionContext`` (``open_context``) whose Spark engine starts on first use only: a plan
with nothing to do, ``environments``, ``invalidate`` and ``plans`` never start a JVM. The work itself is done by
``dagster_sparkmesh.execution``; this module asks, prints and exits.
"""

from __future__ import annotations

import dataclasses
import getpass
import json
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table
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
def open_context(context: CliContext, environment: str) -> Iterator[ExecutionContext]:
    """The execution context of a command; the state store is closed when the command ends."""
    from dagster_sparkmesh.execution.context import ExecutionContext

    project = context.project()
    ctx = ExecutionContext.open(project.path, environment, project=project)
    ctx = dataclasses.replace(ctx, engine_factory=context.engine_factory or _project_engine(project))
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

        # Decided only now: looking for a running server imports pyspark, which a no-op plan never needs.
        connection = connection_for(project.path, project.config.connection)
        return SparkEngine(open_session(connection, project.path))

    return open_engine


def plan_window(start: str | None, end: str | None) -> tuple[datetime | None, datetime | None]:
    """``--start``/``--end`` as datetimes; an end given as a date includes that day (SQLMesh's meaning)."""
    start_at = parse_time(start, "--start") if start else None
    end_at = parse_time(end, "--end") if end else None
    if end_at is not None and is_date_only(end):
        end_at += timedelta(days=1)
    return start_at, end_at


def make_console() -> Console:
    """Rich output; when piped (CI logs, ./dev demo) wider than rich's 80 columns so that diffs are not cut."""
    width = None if sys.stdout.isatty() else 160
    return Console(highlight=False, soft_wrap=True, width=width)


@click.command()
@click.argument("environment", default=PROD, required=False)
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
@click.option("--auto-apply", is_flag=True, help="Apply without asking.")
@click.option("--no-prompts", is_flag=True, help="Never ask; without --auto-apply the plan is only shown.")
@click.option("--explain", is_flag=True, help="Print what applying would do, and change nothing.")
@pass_cli_context
def plan(
    context: CliContext,
    environment: str,
    start: str | None,
    end: str | None,
    forward_only: bool,
    restate_models: tuple[str, ...],
    select_models_: tuple[str, ...],
    effective_from: str | None,
    auto_apply: bool,
    no_prompts: bool,
    explain: bool,
) -> None:
    """Compare the project with ENVIRONMENT (default prod), show the changes, and apply them."""
    from dagster_sparkmesh.cli.plan_view import explain_steps, plan_tree
    from dagster_sparkmesh.execution.backfill import plan_for
    from dagster_sparkmesh.plan.selectors import select_models

    start_at, end_at = plan_window(start, end)
    console = make_console()
    with open_context(context, environment) as ctx:
        restated = select_models(ctx.project.models, restate_models) if restate_models else ()
        options = {
            "forward_only": forward_only,
            "restate_models": restated,
            "selected": select_models(ctx.project.models, select_models_) if select_models_ else None,
            "effective_from": parse_time(effective_from, "--effective-from") if effective_from else None,
        }
        the_plan = plan_for(ctx, start_at, end_at, **options)
        if the_plan.uncategorized:
            categories = _categories_for(the_plan, no_prompts, console)
            the_plan = plan_for(ctx, start_at, end_at, categories=categories, **options)
        if the_plan.is_noop:
            console.print(f"No changes to plan: project files match the `{the_plan.environment}` environment")
            return
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
@click.argument("environment", default=PROD, required=False)
@click.option(
    "--select-model",
    "select_models_",
    multiple=True,
    help="Run only these models (same selectors as plan) and the models upstream of them.",
)
@pass_cli_context
def run(context: CliContext, environment: str, select_models_: tuple[str, ...]) -> None:
    """Compute the intervals that became due (by cron) for ENVIRONMENT's current models; promote nothing new."""
    from dagster_sparkmesh.cli.plan_view import missing_interval_lines, model_progress
    from dagster_sparkmesh.execution.abort import run_until_stopped
    from dagster_sparkmesh.execution.backfill import plan_for, run_models

    console = make_console()
    with open_context(context, environment) as ctx:
        current = _existing_environment(ctx, environment)
        selected = _with_upstream(ctx.project.models, select_models_) if select_models_ else None
        # An environment planned with an explicit end is a bounded preview: it does not grow past that end.
        # Forward-only previews keep their start (a preview grows with time, never back to the environment start).
        the_plan = plan_for(ctx, current.start, current.end or ctx.clock(), preview_start=current.preview_start)
        if the_plan.has_changes:
            raise PlanError(
                f"the project differs from the `{environment}` environment",
                snippet="\n".join(_changed_models(the_plan)),
                hint=f"`sparkmesh plan {environment}` first: run only computes the environment's current models",
            )
        if selected is not None:
            missing = {n: i for n, i in the_plan.missing_intervals.items() if n in selected}
            the_plan = the_plan.model_copy(update={"missing_intervals": missing})
        if not the_plan.missing_intervals:
            scope = "the selected models of " if selected is not None else ""
            console.print(f"Every interval of {scope}`{environment}` is up to date (as of {the_plan.end:%Y-%m-%d %H:%M})")
            return
        for line in missing_interval_lines(the_plan):
            console.print(f"  {line}")
        began = time.monotonic()
        with model_progress(console, total=len(ctx.project.models)) as on_model_done:
            # Ctrl-C stops between models and batches, as for plan (ApplyAborted, exit code 130).
            results = run_until_stopped(
                lambda stop: run_models(ctx, selected, plan=the_plan, on_model_done=on_model_done, should_stop=stop)
            )
        computed = [r for r in results if not r.skipped]
        console.print(
            f"Ran {len(computed)} model(s): {sum(len(r.intervals) for r in computed)} interval(s), "
            f"{sum(r.rows_written for r in computed)} rows written in {time.monotonic() - began:.1f} s"
        )


def _with_upstream(models: Mapping[str, Model], selectors: Sequence[str]) -> tuple[str, ...]:
    """The selected models and every model upstream of them: a model must never be computed from stale parents."""
    from dagster_sparkmesh.plan.selectors import select_models

    chosen = select_models(models, selectors)
    return select_models(models, [f"+{name}" for name in chosen])


def _existing_environment(ctx: ExecutionContext, name: str) -> Environment:
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
    )
    return [f"{label}: {', '.join(names)}" for label, names in groups if names]


@click.command()
@pass_cli_context
def environments(context: CliContext) -> None:
    """The environments: plan, promotion time, expiry and number of models."""
    with open_context(context, PROD) as ctx:
        found = ctx.state.list_environments()
    if not found:
        click.echo("No environments yet: `sparkmesh plan` creates prod")
        return
    table = Table("environment", "plan", "promoted at", "expires at", "models")
    for env in found:
        expires = f"{env.expires_at:%Y-%m-%d %H:%M}" if env.expires_at else "never"
        table.add_row(env.name, env.plan_id[:8], f"{env.promoted_at:%Y-%m-%d %H:%M}", expires, str(len(env.snapshots)))
    make_console().print(table)


@click.command()
@click.argument("environment")
@pass_cli_context
def invalidate(context: CliContext, environment: str) -> None:
    """Mark ENVIRONMENT expired now; the next `sparkmesh janitor` drops its views."""
    if environment.lower() == PROD:
        raise PlanError("prod cannot be invalidated", snippet=environment, hint="invalidate development environments")
    with open_context(context, environment) as ctx:
        if not ctx.state.invalidate_environment(ctx.environment):
            _existing_environment(ctx, ctx.environment)  # raises with the list of environments
    click.echo(f"Environment `{environment}` invalidated; `sparkmesh janitor` removes its views")


@click.command()
@pass_cli_context
def janitor(context: CliContext) -> None:
    """Drop expired environments' views and the tables no environment references (after the snapshot TTL)."""
    from dagster_sparkmesh.execution.janitor import run_janitor

    with open_context(context, PROD) as ctx:
        report = run_janitor(ctx)
    click.echo(f"environments dropped: {', '.join(report.environments_dropped) or 'none'}")
    click.echo(f"views dropped: {len(report.views_dropped)}")
    for table in report.tables_dropped:
        click.echo(f"  dropped table {table}")
    click.echo(f"tables dropped: {len(report.tables_dropped)}; snapshots deleted: {report.snapshots_deleted}")


@click.command()
@click.argument("environment")
@pass_cli_context
def rollback(context: CliContext, environment: str) -> None:
    """Point ENVIRONMENT back at its previous promotion: views only, no recomputation."""
    from dagster_sparkmesh.cli.plan_view import views_text
    from dagster_sparkmesh.execution.promotion import promote
    from dagster_sparkmesh.plan.dates import parse_ttl

    with open_context(context, environment) as ctx:
        current = _existing_environment(ctx, ctx.environment)
        history = ctx.state.environment_history(ctx.environment)
        if not history:
            raise PlanError(f"environment `{environment}` has no previous promotion to roll back to")
        previous = history[0]
        _check_snapshots_kept(ctx, previous)
        ttl = None if ctx.environment == PROD else parse_ttl(ctx.project.config.environment_ttl)
        the_plan = rollback_plan(current, previous, now=ctx.clock(), ttl=ttl)
        summary = json.dumps({"rollback_to": previous.plan_id})
        ctx.state.record_plan_start(the_plan.plan_id, ctx.environment, getpass.getuser(), socket.gethostname(), summary)
        outcome, metrics = "failed", {}
        try:
            promotion = promote(ctx, the_plan)
            outcome, metrics = "succeeded", {"views_changed": len(promotion.views)}
        finally:
            ctx.state.record_plan_end(the_plan.plan_id, outcome, json.dumps(metrics))
    console = make_console()
    console.print(f"Rolled `{environment}` back to plan {previous.plan_id[:8]} ({previous.promoted_at:%Y-%m-%d %H:%M})")
    console.print(views_text(promotion.views, environment))


def rollback_plan(current: Environment, previous: Environment, *, now: datetime, ttl: timedelta | None) -> Plan:
    """A plan whose result is the previous record again: nothing to compute, only views and the record to swap."""
    from dagster_sparkmesh.plan.definition import Plan

    plan_id = uuid.uuid4().hex
    after = previous.model_copy(
        update={
            "plan_id": plan_id,
            "previous_plan_id": current.plan_id,
            "promoted_at": now,
            "expires_at": now + ttl if ttl is not None else None,
        }
    )
    return Plan(
        plan_id=plan_id,
        environment=current.name,
        previous_plan_id=current.plan_id,
        base_environment=current.name,
        start=previous.start,
        end=previous.end or now,
        execution_time=now,
        environment_after=after,
    )


def _check_snapshots_kept(ctx: ExecutionContext, previous: Environment) -> None:
    from dagster_sparkmesh.snapshot.records import SnapshotId

    ids = [SnapshotId(name=s.name, fingerprint=s.fingerprint) for s in previous.snapshots]
    stored = ctx.state.get_snapshots(ids)
    gone = sorted(i.name for i in ids if i not in stored)
    if gone:
        raise PlanError(
            f"cannot roll back `{previous.name}`: the janitor already removed {len(gone)} of its snapshots",
            snippet="\n".join(gone),
            hint=f"plan the older project files again instead: `sparkmesh plan {previous.name}`",
        )


@click.command()
@click.option("-n", "--limit", default=20, show_default=True, help="Show the latest N applications.")
@pass_cli_context
def plans(context: CliContext, limit: int) -> None:
    """The plan application log: who applied which plan where, when, and how it ended."""
    with open_context(context, PROD) as ctx:
        applications = ctx.state.list_plan_applications()[-limit:]
    if not applications:
        click.echo("No plan applied yet")
        return
    table = Table("plan", "environment", "by", "started", "ended", "outcome", "metrics")
    for app in applications:
        ended = f"{app.ended_at:%Y-%m-%d %H:%M:%S}" if app.ended_at else "-"
        table.add_row(
            app.plan_id[:8], app.environment, f"{app.user}@{app.host}", f"{app.started_at:%Y-%m-%d %H:%M:%S}",
            ended, app.outcome or "running or crashed", _metrics_text(app.metrics_json),
        )
    make_console().print(table)


_METRIC_LABELS = {
    "models_updated": "{} models",
    "intervals_processed": "{} intervals",
    "rows_written": "{} rows",
    "duration_seconds": "{:.1f} s",
    "views_changed": "{} views",
}


def _metrics_text(metrics_json: str | None) -> str:
    try:
        metrics = json.loads(metrics_json or "{}")
    except ValueError:
        return metrics_json or ""
    labels = [_METRIC_LABELS.get(key, key + " {}").format(value) for key, value in metrics.items() if value is not None]
    return ", ".join(labels)


COMMANDS = (plan, run, environments, invalidate, janitor, rollback, plans)
