"""dagster-sparkmesh: SQLMesh-style virtual data environments for Dagster, with PySpark as the engine.

``load_project(path)`` loads a project folder; ``model`` is the decorator for Python models. The Dagster API
lives in ``dagster_sparkmesh.dagster`` so that the core imports without Dagster or a JVM.
"""

from __future__ import annotations

from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.project.loader import load_project

# Bound last on purpose: the name ``model`` is the decorator, shadowing the ``dagster_sparkmesh.model``
# subpackage attribute (submodules stay importable as ``dagster_sparkmesh.model.records``).
from dagster_sparkmesh.project.python_models import model  # noqa: E402

__all__ = ["SparkMeshError", "load_project", "model"]
__version__ = "0.1.0"
