"""``@UNION('all'|'distinct', a, b, ...)``: the tables' common columns (same name and type), unioned."""

from __future__ import annotations

from functools import reduce
from typing import Any

from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin, option
from dagster_sparkmesh.macros.builtins.star import relation_name


@builtin
def union(evaluator: Any, kind: Any, *tables: Any) -> exp.Expression:
    mode = str(option(kind, "ALL")).upper() if isinstance(kind, exp.Literal) else "ALL"
    if not isinstance(kind, exp.Literal):
        tables = (kind, *tables)
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
    return reduce(lambda left, right: exp.union(left, right, distinct=mode == "DISTINCT", copy=False), selects)
