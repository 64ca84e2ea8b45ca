"""SQLMesh's built-in macro operators, one per module; ``BUILTINS`` maps each ``@NAME`` to its function.

The clause operators (``@WHERE`` ...) are not here: they are syntax, handled by ``macros.syntax`` and
``macros.clauses``. ``@DEF`` is handled by the evaluator itself (it changes the evaluator's locals).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dagster_sparkmesh.macros.builtins import (
    _common,
    date_spine,
    deduplicate,
    each,
    eval_,
    filter_,
    haversine,
    if_,
    logic,
    pivot,
    reduce_,
    resolve_template,
    safe_math,
    sql,
    star,
    surrogate_key,
    union,
    variables,
)

BUILTINS: dict[str, Callable[..., Any]] = {
    "each": each.each,
    "if": if_.if_,
    "eval": eval_.eval_,
    "filter": filter_.filter_,
    "reduce": reduce_.reduce_,
    "sql": sql.sql,
    "star": star.star,
    "generate_surrogate_key": surrogate_key.generate_surrogate_key,
    "safe_add": safe_math.safe_add,
    "safe_sub": safe_math.safe_sub,
    "safe_div": safe_math.safe_div,
    "union": union.union,
    "haversine_distance": haversine.haversine_distance,
    "pivot": pivot.pivot,
    "and": logic.and_,
    "or": logic.or_,
    "deduplicate": deduplicate.deduplicate,
    "date_spine": date_spine.date_spine,
    "resolve_template": resolve_template.resolve_template,
    "var": variables.var,
    "blueprint_var": variables.blueprint_var,
    "gateway": variables.gateway,
}

MODULES = (_common, date_spine, deduplicate, each, eval_, filter_, haversine, if_, logic, pivot, reduce_, resolve_template,
           safe_math, sql, star, surrogate_key, union, variables)
"""Their sources are part of the parse cache's key."""
