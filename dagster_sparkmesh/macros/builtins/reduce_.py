"""``@REDUCE(items, (x, y) -> ...)``: fold the items left to right with a two-argument lambda."""

from __future__ import annotations

from typing import Any

from dagster_sparkmesh.macros.builtins._common import builtin, items


@builtin
def reduce_(evaluator: Any, values: Any, function: Any) -> Any:
    elements = items(values)
    if not elements:
        raise evaluator.error("@REDUCE of an empty list", function, "pass at least one item")
    result = elements[0]
    for item in elements[1:]:
        result = evaluator.apply(function, result, item)
    return result
