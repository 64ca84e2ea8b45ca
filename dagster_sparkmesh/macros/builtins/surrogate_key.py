"""``@GENERATE_SURROGATE_KEY(a, b, ...)``: a hash of the fields' text, NULLs spelled out so they differ from ''."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin, option

_NULL_TEXT = "_sqlmesh_surrogate_key_null_"


@builtin
def generate_surrogate_key(evaluator: Any, *fields: Any, hash_function: Any = None) -> exp.Expression:
    parts: list[exp.Expression] = []
    for index, field in enumerate(fields):
        if index:
            parts.append(exp.Literal.string("|"))
        as_text = exp.cast(field, exp.DataType.Type.TEXT)
        parts.append(exp.func("COALESCE", as_text, exp.Literal.string(_NULL_TEXT)))
    name = str(option(hash_function, "MD5")).upper()
    return exp.func(name, exp.func("CONCAT", *parts))
