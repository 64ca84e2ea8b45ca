"""``sqlmesh.core.macros``: the ``@macro()`` decorator and the ``MacroEvaluator`` name.

If the macro language package (``dagster_sparkmesh.macros``, being built in parallel) provides a registry and an
evaluator, they are re-exported, so there is one of each. Until then this thin registry stands in: the decorator
only tags the function (no process-wide registry, so two projects never see each other's macros), and
``collect_macros`` reads the tags from a project's imported macro modules.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

MACRO_ATTRIBUTE = "__sparkmesh_macro__"


def _language_package() -> ModuleType | None:
    try:
        return importlib.import_module("dagster_sparkmesh.macros")
    except ModuleNotFoundError as error:
        if error.name not in ("dagster_sparkmesh.macros",):
            raise
        return None


class _PlaceholderEvaluator:
    """Stands for SQLMesh's evaluator in type annotations until the macro language package provides one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("macro evaluation is done by sparkmesh; a macro receives the evaluator")


def macro(name: str | None = None, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@macro()`` or ``@macro("other_name")``: tag a function as a macro named ``name`` or its own name."""
    if callable(name):  # written without parentheses: ``@macro``
        return macro()(name)  # type: ignore[return-value]

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        setattr(function, MACRO_ATTRIBUTE, (name or function.__name__).lower())
        return function

    return decorate


def collect_macros(modules: Iterable[ModuleType]) -> dict[str, Callable[..., Any]]:
    """Macro name → function, for the functions the given modules define with ``@macro``."""
    found: dict[str, Callable[..., Any]] = {}
    for module in modules:
        for value in vars(module).values():
            name = getattr(value, MACRO_ATTRIBUTE, None)
            if callable(value) and isinstance(name, str):
                found[name] = value
    return found


_language = _language_package()
if _language is not None and hasattr(_language, "macro"):
    macro = _language.macro  # noqa: F811 - one registry for the project: the macro language's
MacroEvaluator: Any = getattr(_language, "MacroEvaluator", None) or _PlaceholderEvaluator

__all__ = ["macro", "MacroEvaluator", "collect_macros", "MACRO_ATTRIBUTE"]
