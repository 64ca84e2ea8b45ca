"""One comparison run: every example project, each copied to a scratch folder per tool (neither tool writes into
the cache, and neither sees the other's files), both sides gathered, compared."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from sqlmesh_compat.compare import compare
from sqlmesh_compat.macro_project import write_macro_project
from sqlmesh_compat.projects import example_projects
from sqlmesh_compat.records import ExampleProject, Interval, ProjectScore
from sqlmesh_compat.referee import Referee
from sqlmesh_compat.sparkmesh_side import sparkmesh_side
from sqlmesh_compat.sqlmesh_side import sqlmesh_side


def run_comparison(
    referee: Referee, scratch: Path, unit_tests: bool = True, only: set[str] | None = None,
    spark_folder: Path | None = None,
) -> list[ProjectScore]:
    """``spark_folder``: where sparkmesh's local Spark session keeps its warehouse (default: in ``scratch``)."""
    # The example projects import third-party packages of their own (faker, ibis), as a user's would: sparkmesh's
    # side finds them after its own packages.
    if str(referee.project_requirements) not in sys.path:
        sys.path.append(str(referee.project_requirements))
    interval = Interval()
    spark_folder = (spark_folder or scratch / "spark") if unit_tests else None
    scores = []
    projects = [*example_projects(referee.examples), write_macro_project(scratch / "written")]
    for project in projects:
        if only and project.name not in only:
            continue
        theirs = sqlmesh_side(referee.python, _copy(referee, project, scratch / "sqlmesh"), interval, unit_tests)
        ours = sparkmesh_side(_copy(referee, project, scratch / "sparkmesh"), interval, spark_folder)
        scores.append(compare(project.name, theirs, ours))
    return scores


def _copy(referee: Referee, project: ExampleProject, under: Path) -> list[Path]:
    folders = []
    for folder in project.folders:
        target = under / folder
        shutil.copytree((project.source or referee.examples) / folder, target)
        folders.append(target)
    return folders
