"""``@SQL('text')``: a string (usually built from macro values) parsed as SQL, macros in it included."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin


@builtin
def sql(evaluator: Any, text: Any, into: Any = None) -> Any:
    raw = text.this if isinstance(text, exp.Literal) else text.sql(dialect=evaluator.dialect) if isinstance(text, exp.Expression) else str(text)
    return evaluator.parse_one(raw)
