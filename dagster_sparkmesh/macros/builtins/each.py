"""``@EACH(items, x -> ...)``: the lambda applied to every item; the results fill the list that held the call."""

from __future__ import annotations

from typing import Any

from dagster_sparkmesh.macros.builtins._common import builtin, items


@builtin
def each(evaluator: Any, values: Any, function: Any) -> list[Any]:
    results = []
    for item in items(values):
        result = evaluator.apply(function, item)
        results.extend(result if isinstance(result, list) else [result] if result is not None else [])
    return results
