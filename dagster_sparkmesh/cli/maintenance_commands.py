"""Project maintenance: ``lint``, ``format``, ``check-intervals``, ``destroy`` and ``migrate``.

Only ``destroy`` ever starts Spark; the others read files or the state store. Each command is a shell over a
function that can be called without click (``lint_project``, ``format_project``, ``environment_check_plan``,
``execution.destroy.destroy``, ``migrate_state``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import click

from dagster_sparkmesh.cli.context import CliContext, pass_cli_context
from dagster_sparkmesh.cli.time_arguments import parse_time
from dagster_sparkmesh.clock import utc_now
from dagster_sparkmesh.state.records import VersionStamp


@click.command()
@click.option("--rule", "rules", multiple=True, help="Run only this rule (repeatable).")
@pass_cli_context
def lint(context: CliContext, rules: tuple[str, ...]) -> None:
    """Report models that load but are probably wrong or wasteful; exit 1 when any rule fires.

    Silence a rule for one model with a comment in its file: -- sparkmesh: ignore-lint RULE[, RULE]
    """
    from dagster_sparkmesh.lint import RULES, lint_project

    violations = lint_project(context.project(), rules or None)
    for violation in violations:
        click.echo(violation.format())
    if violations:
        click.echo(f"{len(violations)} lint violation{'s' if len(violations) > 1 else ''}")
        raise click.exceptions.Exit(1)
    click.echo(f"No lint violations ({', '.join(rules or [rule.name for rule in RULES])})")


@click.command("format")
@click.option("--check", is_flag=True, help="Change nothing; exit 1 when a file is not formatted.")
@pass_cli_context
def format_command(context: CliContext, check: bool) -> None:
    """Format the SQL model files (sqlglot's style); MODEL headers are kept exactly as written."""
    from dagster_sparkmesh.project.sql.formatter import format_project

    result = format_project(context.project(), check=check)
    root = context.project().path
    for path in result.changed:
        click.echo(f"{'would reformat' if check else 'reformatted'} {_relative(path, root)}")
    click.echo(f"{len(result.changed)} changed, {len(result.unchanged)} already formatted")
    if check and result.changed:
        raise click.exceptions.Exit(1)


@click.command("check-intervals")
@click.argument("environment")
@click.option("--execution-time", help="Check as of this time (default: now, UTC).")
@pass_cli_context
def check_intervals(context: CliContext, environment: str, execution_time: str | None) -> None:
    """Missing intervals of each model of ENVIRONMENT, as the environment is (not as the files are)."""
    from dagster_sparkmesh.plan.environment_intervals import environment_check_plan, environment_input_gaps

    project = context.project()
    now = parse_time(execution_time, "--execution-time") if execution_time else utc_now()
    with _open_state(project.config.state.url, project.path) as state:
        plan = environment_check_plan(
            state, environment, config=project.config, project_path=project.path, execution_time=now
        )
        lacking = environment_input_gaps(state, plan, config=project.config, project_path=project.path)
    for note in plan.notes:
        click.echo(f"note: {note}")
    for name, gaps in sorted(lacking.items()):
        click.echo(f"{name}: computed from incomplete parents ({'; '.join(g.describe() for g in gaps[:3])})")
    if not plan.missing_intervals and not lacking:
        click.echo(f"{plan.environment}: every interval is complete")
        return
    for name, intervals in plan.missing_intervals.items():
        click.echo(f"{name}: {len(intervals)} missing")
        for start, end in _ranges(intervals):
            click.echo(f"  {start:%Y-%m-%d %H:%M} - {end:%Y-%m-%d %H:%M}")


def _ranges(intervals) -> list[tuple[datetime, datetime]]:
    """Adjacent unit intervals shown as one range."""
    ranges: list[list[datetime]] = []
    for interval in sorted(intervals):
        if ranges and ranges[-1][1] == interval.start:
            ranges[-1][1] = interval.end
        else:
            ranges.append([interval.start, interval.end])
    return [(start, end) for start, end in ranges]


@click.command()
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@pass_cli_context
def destroy(context: CliContext, yes: bool) -> None:
    """Drop every view, table and schema the project created, and its state. Cannot be undone."""
    from dagster_sparkmesh.cli.runtime_commands import open_context
    from dagster_sparkmesh.execution.destroy import destroy as destroy_all

    project = context.project()
    if not yes and not click.confirm(
        f"Drop every environment, table and view of {project.path.name} and its state? This cannot be undone",
        default=False,
    ):
        click.echo("Nothing destroyed")
        return
    with open_context(context, "prod") as ctx:
        report = destroy_all(ctx)
    click.echo(f"environments removed: {', '.join(report.environments) or 'none'}")
    click.echo(f"views dropped: {len(report.views_dropped)}; tables dropped: {len(report.tables_dropped)}")
    click.echo(f"schemas dropped: {', '.join(report.schemas_dropped) or 'none'}")
    for schema in report.schemas_kept:
        click.echo(f"schema {schema} kept: it holds objects sparkmesh did not create")
    click.echo("state deleted")


@dataclass(frozen=True)
class MigrationResult:
    before: VersionStamp | None
    after: VersionStamp

    @property
    def migrated(self) -> bool:
        return self.before is None or self.before.schema_version != self.after.schema_version


def migrate_state(url: str | None, project_path: Path, *, schema: str | None = None) -> MigrationResult:
    """Bring the state store to this package's schema version (opening it migrates) and say from where."""
    from dagster_sparkmesh.state import migrations
    from dagster_sparkmesh.state.connection import create_state_engine, read_transaction
    from dagster_sparkmesh.state.store import default_state_url

    engine = create_state_engine(url or default_state_url(project_path), schema)
    try:
        with read_transaction(engine) as connection:
            before = migrations.read_stamp(connection)
    finally:
        engine.dispose()
    with _open_state(url, project_path, schema) as state:
        return MigrationResult(before=before, after=state.versions())


@click.command()
@pass_cli_context
def migrate(context: CliContext) -> None:
    """Migrate the state store's schema to this version of dagster-sparkmesh."""
    project = context.project()
    result = migrate_state(project.config.state.url, project.path)
    after = result.after
    if not result.migrated:
        click.echo(f"State schema already at v{after.schema_version}")
    elif result.before is None:
        click.echo(f"State store created at schema v{after.schema_version}")
    else:
        click.echo(f"State schema migrated from v{result.before.schema_version} to v{after.schema_version}")
    import sqlglot

    if after.sqlglot_version != sqlglot.__version__:
        click.echo(
            f"note: stored fingerprints were computed with sqlglot {after.sqlglot_version}, this is {sqlglot.__version__}; "
            "the next plan may show formatting-only changes"
        )


def _open_state(url: str | None, project_path: Path, schema: str | None = None):
    from dagster_sparkmesh.state.store import open_state_store

    return open_state_store(url, project_path, schema=schema)


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


COMMANDS = (lint, format_command, check_intervals, destroy, migrate)
