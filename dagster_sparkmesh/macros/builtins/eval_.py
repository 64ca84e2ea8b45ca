"""``@EVAL(expression)``: the expression computed at macro time (``@EVAL(5 + @x)`` → ``6``)."""

from __future__ import annotations

from typing import Any

from dagster_sparkmesh.macros.builtins._common import builtin
from dagster_sparkmesh.macros.evaluation import evaluate


@builtin
def eval_(evaluator: Any, expression: Any) -> Any:
    return evaluate(expression)
