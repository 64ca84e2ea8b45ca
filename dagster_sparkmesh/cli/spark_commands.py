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
    # Only config.yaml: the server can start (and stop) even while a model file does not load.
    from dagster_sparkmesh.project.config.loader import load_config

    return load_config(project_path).config.connection


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

    was_running = server_status(context.project_path).pid is not None
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
