"""Which of SQLMesh's examples are SQLMesh-format projects, found by rule rather than listed by hand."""

from __future__ import annotations

from pathlib import Path

from sqlmesh_compat.records import ExampleProject

CONFIG_FILES = ("config.yaml", "config.yml", "config.py")


def example_projects(examples: Path) -> list[ExampleProject]:
    """A folder with a SQLMesh config and no ``dbt_project.yml`` is a project; an example folder without a config
    whose sub-folders are such projects is one multi-repo project of those (``multi``), its dbt sub-folders left
    out (``multi_hybrid``'s SQLMesh side is its ``sqlmesh_repo`` alone)."""
    projects = []
    for example in sorted(p for p in examples.iterdir() if p.is_dir()):
        if _is_sqlmesh_project(example):
            projects.append(ExampleProject(example.name, (example.name,)))
            continue
        repos = tuple(f"{example.name}/{sub.name}" for sub in sorted(example.iterdir()) if _is_sqlmesh_project(sub))
        if repos:
            projects.append(ExampleProject(example.name, repos))
    return projects


def _is_sqlmesh_project(folder: Path) -> bool:
    return (
        folder.is_dir()
        and any((folder / name).exists() for name in CONFIG_FILES)
        and not (folder / "dbt_project.yml").exists()
    )
