"""One comparison run: every example project, each copied to a scratch folder per tool (neither tool writes into
the cache, and neither sees the other's files), both sides gathered, compared."""

from __future__ import annotations

import dataclasses
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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
    interval = Interval()
    spark_folder = (spark_folder or scratch / "spark") if unit_tests else None
    projects = [*example_projects(referee.examples), write_macro_project(scratch / "written")]
    scores = []
    with _project_requirements_importable(referee.project_requirements):
        for project in projects:
            if only and project.name not in only:
                continue
            theirs = sqlmesh_side(referee.python, _copy(referee, project, scratch / "sqlmesh"), interval, unit_tests)
            ours = sparkmesh_side(_copy(referee, project, scratch / "sparkmesh"), interval, spark_folder)
            scores.append(_without_scratch(compare(project.name, theirs, ours), scratch))
    return scores


@contextmanager
def _project_requirements_importable(folder: Path) -> Iterator[None]:
    """The example projects import third-party packages of their own (faker, ibis), as a user's would: sparkmesh's
    side finds them after its own packages (last on ``sys.path``), for the comparison only."""
    entry = str(folder)
    added = entry not in sys.path
    if added:
        sys.path.append(entry)
    try:
        yield
    finally:
        if added and entry in sys.path:
            sys.path.remove(entry)


def _without_scratch(score: ProjectScore, scratch: Path) -> ProjectScore:
    """Reasons name files relative to the project: the scratch folder changes every run."""
    prefixes = [f"{scratch}/{side}/" for side in ("sparkmesh", "sqlmesh")]

    def clean(text: str) -> str:
        for prefix in prefixes:
            text = text.replace(prefix, "")
        return text

    differences = tuple(dataclasses.replace(d, reason=clean(d.reason)) for d in score.differences)
    return dataclasses.replace(score, differences=differences)


def _copy(referee: Referee, project: ExampleProject, under: Path) -> list[Path]:
    folders = []
    for folder in project.folders:
        target = under / folder
        shutil.copytree((project.source or referee.examples) / folder, target)
        folders.append(target)
    return folders
