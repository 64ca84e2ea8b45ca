"""``@signal()``: a function that says which of a batch of intervals are ready (SQLMesh's contract).

Like ``@macro``, the decorator only tags the function; the project loader collects tagged functions from
``signals/``. A signal receives ``batch`` (a list of ``(start, end)`` datetimes) and the model's signal arguments
as keywords, and returns ``True`` (all ready), ``False`` (none) or the ready subset of ``batch``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from types import ModuleType
from typing import Any

SIGNAL_ATTRIBUTE = "__sparkmesh_signal__"

DatetimeRanges = list[tuple[datetime, datetime]]


def signal(name: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    if callable(name):  # written without parentheses
        return signal()(name)  # type: ignore[return-value]

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        setattr(function, SIGNAL_ATTRIBUTE, (name or function.__name__).lower())
        return function

    return decorate


def collect_signals(modules: Iterable[ModuleType]) -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}
    for module in modules:
        for value in vars(module).values():
            name = getattr(value, SIGNAL_ATTRIBUTE, None)
            if callable(value) and isinstance(name, str):
                found[name] = value
    return found


__all__ = ["signal", "collect_signals", "DatetimeRanges", "SIGNAL_ATTRIBUTE"]
