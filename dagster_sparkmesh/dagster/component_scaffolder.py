"""``dg scaffold defs dagster_sparkmesh.SparkMeshProjectComponent PATH``: writes ``PATH/defs.yaml``.

``--project-path P`` points it at an existing project (written relative to the dg project's root, so the file
stays valid wherever the repository is checked out); ``--init true`` creates a new project in ``PATH/project``
with one model, ready for ``sparkmesh plan``.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from dagster.components.component_scaffolding import scaffold_component
from pydantic import BaseModel

_CONFIG = """gateways:
  local:
    connection:
      type: spark
default_gateway: local

model_defaults:
  dialect: spark
  start: '{start}'
  cron: '@daily'
"""

_MODEL = """MODEL (
  name example.numbers,
  kind FULL,
  description 'A first model: replace it with yours.'
);

SELECT id, id * id AS square
FROM (SELECT EXPLODE(SEQUENCE(1, 10)) AS id)
"""


class SparkMeshScaffoldParams(BaseModel):
    project_path: str | None = None
    """An existing sparkmesh (SQLMesh-format) project folder."""
    init: bool = False
    """Create a new project next to the defs.yaml."""


class SparkMeshProjectScaffolder(dg.Scaffolder[SparkMeshScaffoldParams]):
    @classmethod
    def get_scaffold_params(cls) -> type[SparkMeshScaffoldParams]:
        return SparkMeshScaffoldParams

    def scaffold(self, request: dg.ScaffoldRequest[SparkMeshScaffoldParams]) -> None:
        params = request.params
        if params.init and not params.project_path:
            init_project(request.target_path / "project")
            project = "project"
        elif params.project_path:
            root = request.project_root or Path.cwd()
            folder = Path(params.project_path).resolve()  # as the user typed it, from where dg runs
            if params.init:  # a new project where --project-path says, not beside the defs.yaml
                init_project(folder)
            relative = os.path.relpath(folder.resolve(), start=root)
            project = "{{ context.project_root }}/" + Path(relative).as_posix()
        else:
            project = "PATH/TO/PROJECT"  # the file must name one: loading says so until it does
        scaffold_component(request, {"project": project, "environment": "prod"})


def init_project(folder: Path) -> None:
    """A new project: ``config.yaml`` and one FULL model."""
    (folder / "models" / "example").mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(_CONFIG.format(start="2024-01-01"))
    (folder / "models" / "example" / "numbers.sql").write_text(_MODEL)
