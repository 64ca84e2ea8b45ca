"""The top-level ``sqlmesh`` module as project files see it: ``from sqlmesh import model, macro, signal, ...``."""

from __future__ import annotations

from dagster_sparkmesh.project.python.models import model
from dagster_sparkmesh.sqlmesh_api.execution_context import ExecutionContext
from dagster_sparkmesh.sqlmesh_api.signals import DatetimeRanges, signal

__all__ = ["model", "signal", "DatetimeRanges", "ExecutionContext", "__getattr__"]

_MATERIALIZATION_NAMES = ("CustomMaterialization", "CustomKind", "Model", "QueryOrDF")
_REFUSED = {
    "Context": "a project file runs inside sparkmesh; drive plans with the sparkmesh CLI or Dagster instead",
    "EngineAdapter": "sparkmesh runs on Spark without SQLMesh's engine adapters; use context.spark",
}


def __getattr__(name: str) -> object:
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "macro":  # on first use only: a model file that does not use macros never loads the macro language
        from dagster_sparkmesh.macros import macro

        return macro
    if name in _MATERIALIZATION_NAMES:  # on first use only, as the macro language
        from dagster_sparkmesh.sqlmesh_api import materializations

        return getattr(materializations, name)
    if name == "SQL":
        from dagster_sparkmesh.macros.values import SQL

        return SQL
    # ImportError, not AttributeError: ``from sqlmesh import X`` would replace an AttributeError's message.
    hint = _REFUSED.get(name, "supported names: model, macro, signal, ExecutionContext, SQL, CustomMaterialization, CustomKind, Model")
    raise ImportError(f"sqlmesh.{name} is not available in sparkmesh: {hint}", name="sqlmesh")
