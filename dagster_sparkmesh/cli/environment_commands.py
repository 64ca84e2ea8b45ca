"""Commands about environments and their history: ``environments``, ``invalidate``, ``janitor``, ``rollback``
and ``plans`` (the plan-application log). Only ``janitor`` and ``rollback`` may start Spark."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click
from rich.table import Table

from dagster_sparkmesh.cli.context import CliContext, pass_cli_context
from dagster_sparkmesh.cli.runtime_commands import PROD, existing_environment, make_console, open_context
from dagster_sparkmesh.errors import PlanError

if TYPE_CHECKING:
    from dagster_sparkmesh.execution.context import ExecutionContext
    from dagster_sparkmesh.snapshot.records import Environment


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
            existing_environment(ctx, ctx.environment)  # raises with the list of environments
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
    click.echo(f"stored plans deleted: {report.plans_deleted}")


@click.command()
@click.argument("environment")
@pass_cli_context
def rollback(context: CliContext, environment: str) -> None:
    """Point ENVIRONMENT back at its previous promotion: views only, no recomputation."""
    from dagster_sparkmesh.cli.plan_view import views_text
    from dagster_sparkmesh.execution.apply import promote_plan
    from dagster_sparkmesh.dates import parse_ttl
    from dagster_sparkmesh.plan.rollback import rollback_plan

    with open_context(context, environment) as ctx:
        current = existing_environment(ctx, ctx.environment)
        history = ctx.state.environment_history(ctx.environment)
        if not history:
            raise PlanError(f"environment `{environment}` has no previous promotion to roll back to")
        previous = history[0]
        _check_snapshots_kept(ctx, previous)
        ttl = None if ctx.environment == PROD else parse_ttl(ctx.project.config.environment_ttl)
        the_plan = rollback_plan(current, previous, now=ctx.clock(), ttl=ttl)
        promotion = promote_plan(ctx, the_plan, log={"rollback_to": previous.plan_id})
    console = make_console()
    console.print(f"Rolled `{environment}` back to plan {previous.plan_id[:8]} ({previous.promoted_at:%Y-%m-%d %H:%M})")
    console.print(views_text(promotion.views, environment))


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


COMMANDS = (environments, invalidate, janitor, rollback, plans)
