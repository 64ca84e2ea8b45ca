"""``SparkMeshResource``: where the project, the state store and Spark are, as Dagster resource config.

Anything left unset falls back to the project's ``config.yaml``. The resource only opens an
``ExecutionContext``; Spark itself starts lazily, on the first statement a step really needs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, get_args

import dagster as dg
from pydantic import Field

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.csv_sources import register_csv_sources
from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.project.config import EngineMode, SparkConnection
from dagster_sparkmesh.project.records import Project

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine

RESOURCE_KEY = "sparkmesh"


class SparkMeshResource(dg.ConfigurableResource):
    """Runs sparkmesh steps of a project on Spark.

    ``engine_mode``: ``local`` (in-process session; embedded Derby admits one process, so use Dagster's
    in-process executor), ``managed`` (a Spark Connect server sparkmesh starts and shares between run processes)
    or ``connect`` (an existing server at ``remote``). ``master`` applies to local and managed sessions.
    """

    project_dir: str
    more_project_dirs: list[str] = Field(
        default_factory=list, description="further repositories of a multi-repo project, read with project_dir"
    )
    engine_mode: str | None = Field(default=None, description="local, managed or connect (default: config.yaml)")
    remote: str | None = Field(default=None, description="Spark Connect URL (sc://host:port) for engine_mode=connect")
    master: str | None = Field(default=None, description="local[N], spark://host:7077, yarn, k8s://...")
    state_url: str | None = Field(default=None, description="SQLAlchemy URL of the state store")
    spark_config: dict[str, str] = Field(default_factory=dict, description="extra spark.* settings")
    max_workers: int = Field(default=2, description="models of one step computed in parallel")
    csv_sources: dict[str, str] = Field(
        default_factory=dict,
        description="external model -> folder of CSV files (relative to project_dir), created as a CSV table on "
        "first use: local development without the production source",
    )

    def connection(self, project: Project) -> SparkConnection:
        """The project's Spark connection with this resource's overrides applied."""
        base = project.config.connection
        overrides: dict[str, object] = {"config": {**base.config, **self.spark_config}}
        if self.engine_mode is not None:
            if self.engine_mode not in get_args(EngineMode):
                raise ConfigError(
                    f"unknown engine_mode {self.engine_mode!r} in the sparkmesh resource",
                    snippet=self.engine_mode,
                    hint=f"use one of {', '.join(get_args(EngineMode))}",
                )
            overrides["mode"] = self.engine_mode
        if self.remote is not None:
            overrides["remote"] = self.remote
        if self.master is not None:
            overrides["master"] = self.master
        return base.model_copy(update=overrides)

    def load_project(self) -> Project:
        from dagster_sparkmesh.project.loader import load_project

        return load_project(Path(self.project_dir), more_paths=[Path(p) for p in self.more_project_dirs])

    def open_context(self, environment: str, project: Project | None = None) -> ExecutionContext:
        """A context for one step; call ``ctx.close()`` when the step ends."""
        project = project or self.load_project()
        return ExecutionContext.open(
            project.path,
            environment,
            state_url=self.state_url,
            connection=self.connection(project),
            project=project,
            max_workers=self.max_workers,
            on_engine_open=self._csv_sources_of(project) if self.csv_sources else None,
            partial_intervals=False,  # a Dagster partition is a whole interval
        )

    def _csv_sources_of(self, project: Project) -> Callable[[SparkEngine], None]:
        """Registers the CSV sources when the step's engine first opens: a step that needs no Spark never starts it."""
        folders = {name: project.runtime_path / folder for name, folder in self.csv_sources.items()}

        def register(engine: SparkEngine) -> None:
            register_csv_sources(engine, dict(project.external_models), folders)

        return register
