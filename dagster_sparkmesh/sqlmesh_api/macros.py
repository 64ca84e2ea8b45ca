"""``sqlmesh.core.macros``: ``macro`` and ``MacroEvaluator``, from the macro language package.

Resolved on first use, so that a model file importing only ``from sqlmesh import model`` never loads the macro
language: each package of the project imports what it uses, and nothing more.
"""

from __future__ import annotations

import importlib

_FROM_MACROS_PACKAGE = frozenset({"macro", "MacroEvaluator", "MACRO_ATTRIBUTE", "collect_macros"})


def __getattr__(name: str) -> object:
    if name in _FROM_MACROS_PACKAGE:
        return getattr(importlib.import_module("dagster_sparkmesh.macros"), name)
    raise AttributeError(name)


__all__ = ["__getattr__"]
