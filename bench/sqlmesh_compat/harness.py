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
from sqlmesh_compat.spark_rows import spark_stage, with_spark_rows
from sqlmesh_compat.sqlmesh_side import sqlmesh_side
from sqlmesh_spark.records import Window


def run_comparison(
    referee: Referee, scratch: Path, unit_tests: bool = True, only: set[str] | None = None,
    spark_folder: Path | None = None, spark_window: Window | None = None,
) -> list[ProjectScore]:
    """``spark_folder``: where sparkmesh's local Spark session keeps its warehouse (default: in ``scratch``);
    ``spark_window``: run the ``--spark`` stage over these days (None: not run)."""
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
            score = compare(project.name, theirs, ours)
            if spark_window is not None:
                sources = [(project.source or referee.examples) / folder for folder in project.folders]
                rows = spark_stage(referee, sources, spark_window, scratch / "spark_rows" / project.name,
                                   project.setup_sql)
                score = with_spark_rows(score, rows)
            scores.append(_without_scratch(score, scratch))
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
    prefixes += [f"{scratch}/spark_rows/{score.name}/{side}/" for side in ("sparkmesh", "sqlmesh", "sqlmesh_spark")]

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
