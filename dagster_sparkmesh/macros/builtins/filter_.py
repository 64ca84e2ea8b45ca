"""``@FILTER(items, x -> condition)``: the items for which the condition holds, as an array."""

from __future__ import annotations

from typing import Any

from dagster_sparkmesh.macros.builtins._common import builtin, items
from dagster_sparkmesh.macros.evaluation import truth


@builtin
def filter_(evaluator: Any, values: Any, function: Any) -> list[Any]:
    return [item for item in items(values) if truth(evaluator.apply(function, item.copy()))]
