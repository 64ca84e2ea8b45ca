"""What the runtime and data command tests share: a tiny project and the commands with an injected engine.

One JVM holds one local session, so the commands get the test session's engine through
``CliContext.engine_factory``; a factory that counts its calls tells whether a command started Spark at all.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import click
from click.testing import CliRunner

from dagster_sparkmesh.cli.context import CliContext
from dagster_sparkmesh.cli.main import SparkMeshGroup, main

EVENTS = """
MODEL (name raw.events, kind FULL);

SELECT d.ds, i.id, i.id * 10 AS amount
FROM (SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-03', INTERVAL 1 DAY)) AS ds) AS d
CROSS JOIN (SELECT explode(sequence(1, 3)) AS id) AS i
"""

DAILY = """
MODEL (
  name shop.daily,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds),
  grain ds
);

SELECT ds, SUM(amount) AS total, COUNT(*) AS orders
FROM raw.events
WHERE ds BETWEEN @start_ds AND @end_ds
GROUP BY ds
"""


def write_tiny_project(folder: Path) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  cron: '@daily'\n")
    (folder / "models" / "events.sql").write_text(textwrap.dedent(EVENTS))
    (folder / "models" / "daily.sql").write_text(textwrap.dedent(DAILY))
    return folder


class CountingFactory:
    def __init__(self, engine=None) -> None:
        self.engine = engine
        self.calls = 0

    def __call__(self):
        self.calls += 1
        if self.engine is None:
            raise AssertionError("this command must not start Spark")
        return self.engine


def cli(project: Path, engine_factory) -> click.Group:
    """The ``sparkmesh`` commands, with an injected engine instead of the project's own session."""

    @click.group(cls=SparkMeshGroup)
    @click.pass_context
    def group(ctx: click.Context) -> None:
        ctx.obj = CliContext(project_path=project, engine_factory=engine_factory)

    for command in main.commands.values():
        group.add_command(command)
    return group


def invoke(project: Path, args: list[str], engine=None, *, input: str | None = None):
    factory = CountingFactory(engine)
    result = CliRunner().invoke(cli(project, factory), args, input=input, catch_exceptions=False)
    return result, factory
