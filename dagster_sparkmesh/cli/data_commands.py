"""Commands that read data on Spark: ``table-diff``, ``fetchdf`` and ``test`` (the YAML unit tests)."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

import click
from rich.table import Table

from dagster_sparkmesh.cli.context import CliContext, pass_cli_context
from dagster_sparkmesh.cli.runtime_commands import PROD, make_console, open_context
from dagster_sparkmesh.errors import ExecutionError, UnitTestFailure
from dagster_sparkmesh.snapshot.naming import view_name, with_default_schema

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.table_diff import TableDiff
    from dagster_sparkmesh.execution.context import ExecutionContext


def parse_environments(text: str) -> tuple[str, str]:
    source, sep, target = text.partition(":")
    if not sep or not source or not target:
        raise click.BadParameter(f"{text!r} is not SOURCE:TARGET, e.g. prod:dev", param_hint="ENVIRONMENTS")
    return source.strip(), target.strip()


@click.command("table-diff")
@click.argument("environments", metavar="SOURCE:TARGET")
@click.argument("model_name")
@click.option("-o", "--on", "keys", multiple=True, help="Join column (repeatable). Default: the model's grain.")
@click.option("--skip", "skipped", multiple=True, help="Column not to compare (repeatable).")
@click.option("--decimals", default=3, show_default=True, help="Round numbers to N decimals before comparing.")
@click.option("--show-sample", is_flag=True, help="Show a few rows whose values differ.")
@pass_cli_context
def table_diff(
    context: CliContext,
    environments: str,
    model_name: str,
    keys: tuple[str, ...],
    skipped: tuple[str, ...],
    decimals: int,
    show_sample: bool,
) -> None:
    """Compare MODEL_NAME between two environments: schema, row counts, differing values per column."""
    from dagster_sparkmesh.engine.table_diff import table_diff as diff_tables

    from dagster_sparkmesh.plan.selectors import is_selector, select_one_model

    source, target = parse_environments(environments)
    with open_context(context, PROD) as ctx:
        models = ctx.project.models
        typed = with_default_schema(model_name.lower())
        name = select_one_model(models, model_name) if is_selector(model_name) else typed
        model = models.get(name)
        if model is None:
            raise ExecutionError(f"unknown model {name!r}", hint="see `sparkmesh info` for the model names")
        options = {"on": list(keys) or None, "skip": list(skipped), "decimals": decimals}
        diff = diff_tables(ctx.engine, model, _relation(ctx, name, source), _relation(ctx, name, target), **options)
    console = make_console()
    for renderable in table_diff_view(diff, show_sample=show_sample):
        console.print(renderable)


def _relation(ctx: ExecutionContext, model_name: str, environment: str) -> str:
    record = ctx.state.get_environment(environment)
    if record is not None and record.snapshot_for(model_name) is not None:
        return record.relation_of(model_name)
    model = ctx.project.models.get(model_name)  # (the environment has no such model: named as the project has it)
    return view_name(model_name, environment, model.catalog if model is not None else None)


def table_diff_view(diff: TableDiff, *, show_sample: bool) -> list:
    """Schema changes, row counts, then the mismatching values per column (and a sample of them)."""
    parts: list = [f"Table diff of {diff.model}: {diff.source} -> {diff.target}"]
    schema = Table("schema change", "column", "type", title="Schema", title_justify="left")
    for column, type_ in diff.added_columns:
        schema.add_row("[green]added[/green]", column, type_)
    for column, type_ in diff.removed_columns:
        schema.add_row("[red]removed[/red]", column, type_)
    for column, before, after in diff.retyped_columns:
        schema.add_row("[yellow]retyped[/yellow]", column, f"{before} -> {after}")
    parts.append(schema if schema.row_count else "Schema: identical")
    counts = Table("", diff.source, diff.target, title=f"Rows (joined on {', '.join(diff.keys)})", title_justify="left")
    counts.add_row("rows", str(diff.source_rows), str(diff.target_rows))
    counts.add_row("only here", str(diff.only_in_source), str(diff.only_in_target))
    counts.add_row("matched by key", str(diff.matched), str(diff.matched))
    parts.append(counts)
    values = Table("column", "rows that differ", "% of matched", title="Values", title_justify="left")
    for column, count in diff.mismatches:
        share = f"{100 * count / diff.matched:.1f}%" if diff.matched else "-"
        values.add_row(column, f"[red]{count}[/red]" if count else "0", share)
    parts.append(values if values.row_count else "Values: no common column besides the keys")
    if show_sample and diff.sample:
        parts.append(_sample_table(diff))
    parts.append("[green]No differences[/green]" if diff.identical else "[yellow]The tables differ[/yellow]")
    return parts


def _sample_table(diff: TableDiff) -> Table:
    """The keys, then source and target values of the columns that differ somewhere (equal columns are noise)."""
    differing = {column for column, count in diff.mismatches if count}
    kept = [
        index for index, title in enumerate(diff.sample_header)
        if index < len(diff.keys) or title.rsplit(" (", 1)[0] in differing
    ]
    sample = Table(*(diff.sample_header[i] for i in kept), title="Sample of differing rows", title_justify="left")
    for row in diff.sample:
        sample.add_row(*(row[i] for i in kept))
    return sample


@click.command()
@click.argument("sql")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of row objects (columns in query order).")
@click.option("--limit", default=1000, show_default=True, help="At most this many rows (0: no limit).")
@pass_cli_context
def fetchdf(context: CliContext, sql: str, as_json: bool, limit: int) -> None:
    """Run SQL on the project's Spark session and print the result (statements like CREATE TABLE run too)."""
    with open_context(context, PROD) as ctx:
        frame = ctx.engine.catalog.query_df(sql)
        columns = list(frame.columns)
        rows = [tuple(row) for row in (frame.limit(limit) if limit and columns else frame).collect()]
    if as_json:
        click.echo(json.dumps(rows_as_json(columns, rows), indent=2))
        return
    if not columns:
        click.echo("OK")
        return
    table = Table(*columns)
    for row in rows:
        table.add_row(*("NULL" if value is None else str(value) for value in row))
    make_console().print(table)
    click.echo(f"{len(rows)} row(s)")


def rows_as_json(columns: Sequence[str], rows: Sequence[tuple]) -> list[dict[str, object]]:
    return [{column: json_value(value) for column, value in zip(columns, row)} for row in rows]


def iso_duration(value: timedelta) -> str:
    """An interval as ISO 8601 writes a duration: ``P6D``, ``PT1H30M``, ``-P1DT0.5S``."""
    sign, value = ("-", -value) if value < timedelta(0) else ("", value)
    hours, rest = divmod(value.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    second_text = f"{seconds + value.microseconds / 1_000_000:g}S" if seconds or value.microseconds else ""
    time_text = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "") + second_text
    text = (f"{value.days}D" if value.days else "") + (f"T{time_text}" if time_text else "")
    return f"{sign}P{text or 'T0S'}"


def json_value(value: object) -> object:
    """Spark values as JSON: dates and times as ISO strings, decimals as numbers, nested rows as objects."""
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):  # a day-time interval (`date - date`)
        return iso_duration(value)
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    if hasattr(value, "asDict"):  # a Spark Row (struct column)
        return {key: json_value(item) for key, item in value.asDict().items()}
    if isinstance(value, dict):
        return {str(key): json_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(item) for item in value]
    return value


@click.command("test")
@click.argument("names", nargs=-1)
@pass_cli_context
def unit_test(context: CliContext, names: tuple[str, ...]) -> None:
    """Run the YAML unit tests (all, or those of the given tests or models) on Spark."""
    from dagster_sparkmesh.execution.unit_tests import run_unit_tests

    with open_context(context, PROD) as ctx:
        wanted = None
        if names:  # a test by its name as written; a model also by its name without a schema (default.<name>)
            wanted = {name.lower() for name in names} | set(names) | {with_default_schema(n.lower()) for n in names}
        results = run_unit_tests(ctx, wanted)
    console = make_console()
    for result in results:
        mark = "[green]PASS[/green]" if result.passed else "[red]FAIL[/red]"
        console.print(f"{mark} {result.name} ({result.model})")
        if not result.passed:
            console.print(f"     {result.message}", markup=False)
    failed = [r for r in results if not r.passed]
    if names and not results:
        raise UnitTestFailure(f"no unit test matches {' '.join(names)}", hint="name a test or a model that has tests")
    if failed:
        raise UnitTestFailure(
            f"{len(failed)} of {len(results)} unit test(s) failed",
            snippet="\n".join(f"{r.name}: {r.message}" for r in failed),
        )
    console.print(f"{len(results)} unit test(s) passed")


COMMANDS = (table_diff, fetchdf, unit_test)
