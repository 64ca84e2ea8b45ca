"""The ``sparkmesh`` click group: the ``--project`` option, error handling and command registration.

A user error (any ``SparkMeshError``) prints its message, which already names the file, line, offending text and
hint, to stderr and exits with code 2 (click's own usage errors use 2 as well); anything else is a bug and keeps
its traceback (exit code 1).

Commands live in one module per group, each exposing ``COMMANDS``; add a module to ``COMMAND_MODULES`` below, or
call ``main.add_command(command)``. Command modules import heavy packages (the engine, pyspark, the state store)
inside their functions, so that ``sparkmesh clean`` and ``sparkmesh info`` stay fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dagster_sparkmesh.cli import (
    data_commands,
    environment_commands,
    maintenance_commands,
    project_commands,
    runtime_commands,
    spark_commands,
)
from dagster_sparkmesh.cli.context import CliContext
from dagster_sparkmesh.errors import SparkMeshError

COMMAND_MODULES = (
    project_commands, runtime_commands, environment_commands, data_commands, spark_commands, maintenance_commands
)


class SparkMeshGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SparkMeshError as error:
            click.secho(f"Error: {error}", err=True, fg="red")
            ctx.exit(error.exit_code)


@click.group(cls=SparkMeshGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-p",
    "--project",
    "project_paths",
    default=(".",),
    show_default=True,
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The project folder (config.yaml, models/, ...); repeat it for a multi-repo project (the first folder's "
    "config decides the gateway and the state).",
)
@click.option("--no-cache", is_flag=True, help="Parse every model file again instead of using .sparkmesh/cache.")
@click.option("--gateway", default=None, help="The gateway of the config to use (default: its default_gateway).")
@click.version_option(package_name="dagster-sparkmesh", prog_name="sparkmesh")
@click.pass_context
def main(ctx: click.Context, project_paths: tuple[Path, ...], no_cache: bool, gateway: str | None) -> None:
    """SQLMesh-style virtual data environments on Spark, for Dagster."""
    first, *more = project_paths
    ctx.obj = CliContext(project_path=first, use_cache=not no_cache, gateway=gateway, more_paths=tuple(more))


for _module in COMMAND_MODULES:
    for _command in _module.COMMANDS:
        main.add_command(_command)
