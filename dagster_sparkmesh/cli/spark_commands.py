"""``sparkmesh spark start|stop|status``: the project's managed Spark Connect server.

While that server runs it owns the project's catalog (embedded Derby admits one JVM), so every other command
of a ``local`` project connects to it instead of booting its own session (``connection_for``): the server is
both the way to share the catalog between processes and a way to skip the JVM start of each command.
"""

from __future__ import annotations

from pathlib import Path

import click

from dagster_sparkmesh.cli.context import CliContext, pass_cli_context
from dagster_sparkmesh.project.config import SparkConnection


def connection_for(project_path: Path, connection: SparkConnection) -> SparkConnection:
    """The configured connection, or the running managed server for a ``local`` project."""
    if connection.mode != "local":
        return connection
    from dagster_sparkmesh.engine.connect_server import server_status

    if server_status(project_path).running:
        return connection.model_copy(update={"mode": "managed"})
    return connection


def _configured_connection(project_path: Path) -> SparkConnection:
    """config.yaml's connection, with the lakehouse format the project's tables need (``engine.lakehouse``)."""
    from dagster_sparkmesh.engine.lakehouse import with_lakehouse
    from dagster_sparkmesh.project.config.loader import load_config

    config = load_config(project_path).config
    table_format = _served_format(project_path, config.model_defaults.table_format)
    return config.connection.model_copy(update={"config": with_lakehouse(config.connection.config, table_format)})


def _served_format(project_path: Path, default_format: str | None) -> str | None:
    """The project's lakehouse format; the server can start (and stop) even while a model file does not load:
    then model_defaults' format."""
    from dagster_sparkmesh.errors import SparkMeshError
    from dagster_sparkmesh.model.table_formats import LAKEHOUSE_FORMATS, project_lakehouse_format
    from dagster_sparkmesh.project.loader import load_project

    try:
        return project_lakehouse_format(load_project(project_path).models.values())
    except SparkMeshError:
        return default_format if default_format in LAKEHOUSE_FORMATS else None


@click.group()
def spark() -> None:
    """The project's managed Spark Connect server (shared by every sparkmesh and Dagster process)."""


@spark.command()
@pass_cli_context
def start(context: CliContext) -> None:
    """Start the server (or reuse the running one) and print its address."""
    from dagster_sparkmesh.engine.connect_server import start_server

    click.echo("starting the Spark Connect server (10-20 s the first time)...")
    status = start_server(context.project_path, _configured_connection(context.project_path))
    click.echo(f"Spark Connect server running at {status.url} (pid {status.pid}, log {status.log_path})")


@spark.command()
@pass_cli_context
def stop(context: CliContext) -> None:
    """Stop the server and its workers."""
    from dagster_sparkmesh.engine.connect_server import server_status, stop_server

    current = server_status(context.project_path)
    was_running = current.pid is not None
    if was_running and current.class_archive_dump is not None:
        click.echo("the server writes its class-data archive as it exits (once per machine: later starts are faster)...")
    stop_server(context.project_path)
    click.echo("Spark Connect server stopped" if was_running else "no Spark Connect server was running")


@spark.command()
@pass_cli_context
def status(context: CliContext) -> None:
    """Whether the server runs, with its address and log file."""
    from dagster_sparkmesh.engine.connect_server import server_status

    current = server_status(context.project_path)
    if current.running:
        click.echo(f"running at {current.url} (pid {current.pid}, log {current.log_path})")
    elif current.pid is not None:
        click.echo(f"starting (pid {current.pid}, log {current.log_path})")
    else:
        click.echo("not running" + (f" (last log {current.log_path})" if current.log_path else ""))


COMMANDS = (spark,)
