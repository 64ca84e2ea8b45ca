"""What the built-in operators share: reading list arguments and literal options."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlglot import exp

from dagster_sparkmesh.macros.values import python_value

F = TypeVar("F", bound=Callable[..., Any])


def builtin(function: F) -> F:
    """Built-ins take expressions as they are: no typed-macro conversion of their arguments."""
    function.__sparkmesh_builtin__ = True  # type: ignore[attr-defined]
    return function


def items(value: Any) -> list[Any]:
    """The elements of an array argument (``[a, b]``, ``(a, b)``, a list a macro returned) or the value alone."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (exp.Array, exp.Tuple)):
        return list(value.expressions)
    if isinstance(value, exp.Paren):
        return [value.this]
    return [value]


def option(value: Any, default: Any = None) -> Any:
    """A literal option (``'km'``, ``TRUE``, ``1``) as a Python value."""
    if value is None:
        return default
    if isinstance(value, exp.Expression):
        if isinstance(value, exp.Null):
            return default
        return python_value(value)
    return value


def flag(value: Any, default: bool) -> bool:
    raw = option(value, default)
    if isinstance(raw, str):
        return raw.lower() in ("true", "1", "yes")
    return bool(raw)
