"""``@IF(condition, then[, else])``: one branch, or nothing (the call disappears from its list or statement)."""

from __future__ import annotations

from typing import Any

from dagster_sparkmesh.macros.builtins._common import builtin
from dagster_sparkmesh.macros.evaluation import NotConstant, truth


@builtin
def if_(evaluator: Any, condition: Any, then: Any, otherwise: Any = None) -> Any:
    try:
        decided = truth(condition)
    except NotConstant:
        raise evaluator.error(f"the condition of @IF is not constant: {condition.sql()}", condition,
                              "@IF decides with macro values only (no column references); use CASE WHEN in SQL") from None
    return then if decided else otherwise
