"""dagster-sparkmesh: SQLMesh-style virtual data environments for Dagster, with PySpark as the engine.

``load_project(path)`` loads a project folder; ``model``, ``macro`` and ``signal`` are the decorators of
project Python files (the same objects ``from sqlmesh import ...`` gives them, see ``sqlmesh_api``). The Dagster API
lives in ``dagster_sparkmesh.dagster`` so that the core imports without Dagster or a JVM.
"""

from __future__ import annotations

from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.macros import MacroEvaluator, macro
from dagster_sparkmesh.project.loader import load_project

# Bound last on purpose: the name ``model`` is the decorator, shadowing the ``dagster_sparkmesh.model``
# subpackage attribute (submodules stay importable as ``dagster_sparkmesh.model.records``).
from dagster_sparkmesh.project.python.models import model  # noqa: E402
from dagster_sparkmesh.sqlmesh_api.signals import signal  # noqa: E402

__all__ = ["SparkMeshError", "load_project", "macro", "model", "signal"]


_LAZY = ("SparkMeshProjectComponent",)


def __getattr__(name: str) -> object:
    # ``macro`` on first use: importing the package for a Dagster definition never loads the macro language.
    if name == "macro":
        from dagster_sparkmesh.macros import macro

        return macro
    # The Component imports Dagster: only when asked for (``type: dagster_sparkmesh.SparkMeshProjectComponent``).
    if name == "SparkMeshProjectComponent":
        from dagster_sparkmesh.dagster.component import SparkMeshProjectComponent

        return SparkMeshProjectComponent
    raise AttributeError(f"module 'dagster_sparkmesh' has no attribute {name!r}")


def __dir__() -> list[str]:
    # `dg list components` finds a package's components through dir(): the lazy ones must be listed.
    return sorted([*globals(), *_LAZY])
__version__ = "0.1.0"
