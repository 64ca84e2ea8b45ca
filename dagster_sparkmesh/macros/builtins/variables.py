"""``@VAR('name'[, default])``, ``@BLUEPRINT_VAR('name'[, default])``, ``@GATEWAY``: values from configuration."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin, option
from dagster_sparkmesh.macros.values import literal


def _lookup(evaluator: Any, table: dict[str, Any], macro: str, name: Any, default: Any) -> exp.Expression:
    key = str(option(name, "")).lower()
    if key in table:
        return literal(table[key])
    if default is not None:
        return default
    where = "under 'variables' in config.yaml" if macro == "var" else "in the model's blueprints"
    raise evaluator.error(f"unknown variable {key!r} in @{macro.upper()}", name if isinstance(name, exp.Expression) else exp.Null(),
                          f"define {key!r} {where} or give a default: @{macro.upper()}('{key}', value)", macro=macro)


@builtin
def var(evaluator: Any, name: Any, default: Any = None) -> exp.Expression:
    return _lookup(evaluator, evaluator.variables, "var", name, default)


@builtin
def blueprint_var(evaluator: Any, name: Any, default: Any = None) -> exp.Expression:
    return _lookup(evaluator, evaluator.blueprint_variables, "blueprint_var", name, default)


@builtin
def gateway(evaluator: Any) -> exp.Expression:
    return exp.Literal.string(evaluator.gateway or "")
