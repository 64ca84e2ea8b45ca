"""``sqlmesh.utils.pydantic``: the value validators materialization kinds use on their properties."""

from __future__ import annotations

from typing import Any

from sqlglot import exp


def validate_string(value: Any) -> str:
    """A property's value as text: an identifier or literal by its name, anything else as ``str``."""
    return value.name if isinstance(value, exp.Expression) else str(value)


def validate_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value.this) if isinstance(value, exp.Boolean) else bool(value)


__all__ = ["validate_string", "validate_bool"]
