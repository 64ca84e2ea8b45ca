"""``@UNION([condition,] ['all'|'distinct',] a, b, ...)``: the tables' common columns (same name and type), unioned;
with a false condition, the first table's select alone."""

from __future__ import annotations

from functools import reduce
from typing import Any

from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin, option
from dagster_sparkmesh.macros.builtins.star import relation_name
from dagster_sparkmesh.macros.evaluation import NotConstant, truth

_TABLE_NODES = (exp.Column, exp.Table, exp.Dot, exp.Identifier)


@builtin
def union(evaluator: Any, *arguments: Any) -> exp.Expression:
    condition, kind, tables = _split(evaluator, list(arguments))
    mode = str(option(kind, "ALL")).upper() if kind is not None else "ALL"
    schemas = [(relation_name(table), evaluator.columns_to_types(relation_name(table))) for table in tables]
    first = schemas[0][1]
    common = [
        name for name, data_type in first.items()
        if all(str(schema.get(name, "")).lower() == str(data_type).lower() for _, schema in schemas[1:])
    ]
    selects = [
        exp.select(*(exp.alias_(exp.cast(exp.column(c), exp.DataType.build(str(first[c]), dialect="spark")), c) for c in common))
        .from_(exp.to_table(name))
        for name, _ in schemas
    ]
    if not condition:
        return selects[0]
    return reduce(lambda left, right: exp.union(left, right, distinct=mode == "DISTINCT", copy=False), selects)


def _split(evaluator: Any, arguments: list[Any]) -> tuple[bool, Any, list[Any]]:
    """(condition, union kind, tables): a first argument that is neither a kind literal nor a table is a condition
    (SQLMesh decides the same way: an argument evaluating to a boolean)."""
    condition = True
    if arguments and not isinstance(arguments[0], (exp.Literal, *_TABLE_NODES)):
        node = arguments.pop(0)
        try:
            condition = truth(node)
        except NotConstant:
            raise evaluator.error(f"the condition of @UNION is not constant: {node.sql()}", node,
                                  "@UNION decides with macro values only (no column references)") from None
    kind = arguments.pop(0) if arguments and isinstance(arguments[0], exp.Literal) else None
    if not arguments:
        raise evaluator.error("@UNION needs at least one table", kind or exp.null(), "name the tables to union")
    return condition, kind, arguments
