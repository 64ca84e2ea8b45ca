"""The names of the render-time macros, for the project side (the macro language is ``dagster_sparkmesh.macros``).

``TIME_MACROS`` / ``BUILTIN_MACROS`` name the macro variables whose value only rendering for an interval knows.
"""

from __future__ import annotations

from sqlglot import exp

from dagster_sparkmesh.macros.expansion import TIME_MACROS
from dagster_sparkmesh.macros.values import literal

BUILTIN_MACROS = TIME_MACROS | {"this_model"}


def variable_literal(value: object) -> exp.Expression:
    return literal(value)
