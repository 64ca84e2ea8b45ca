"""What every command receives: the project folder, loaded on first use only.

``clean`` must work on a project that does not load, so nothing here loads eagerly. ``version_for`` decides
which physical table a model is read from; without a state store it is the version a new snapshot would get,
and a command that knows an environment can replace it with the versions recorded in the state store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.project.records import Project

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine


@dataclass
class CliContext:
    project_path: Path
    use_cache: bool = True
    version_for: Callable[[Model], str] | None = None
    """None: the version a plan gives a new snapshot (``project_commands.new_snapshot_version``)."""
    engine_factory: Callable[[], SparkEngine] | None = None
    """None: the project's configured Spark session; tests and embedding programs inject an engine here."""
    gateway: str | None = None
    """``--gateway``: the config's gateway to use instead of its ``default_gateway`` (as ``sqlmesh --gateway``)."""
    more_paths: tuple[Path, ...] = ()
    """Further repositories of a multi-repo project (``-p repo_1 -p repo_2``)."""
    _project: Project | None = field(default=None, repr=False)

    def project(self) -> Project:
        if self._project is None:
            # Imported here so that commands that never load a project (clean) never import the loader.
            from dagster_sparkmesh.project.loader import load_project

            self._project = load_project(
                self.project_path, use_cache=self.use_cache, gateway=self.gateway, more_paths=self.more_paths
            )
        return self._project


pass_cli_context = click.make_pass_decorator(CliContext)
