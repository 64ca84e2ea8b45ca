"""``@PIVOT(column, [values], ...)``: one aggregated CASE WHEN projection per value."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin, flag, items, option


@builtin
def pivot(
    evaluator: Any,
    column: Any,
    values: Any,
    alias: Any = None,
    agg: Any = None,
    cmp: Any = None,
    prefix: Any = None,
    suffix: Any = None,
    then_value: Any = None,
    else_value: Any = None,
    quote: Any = None,
    distinct: Any = None,
) -> list[exp.Expression]:
    aggregate = str(option(agg, "SUM"))
    comparison = str(option(cmp, "="))
    then = then_value if then_value is not None else exp.Literal.number(1)
    otherwise = else_value if else_value is not None else exp.Literal.number(0)
    projections = []
    for value in items(values):
        case = f"CASE WHEN {column.sql()} {comparison} {value.sql()} THEN {then.sql()} ELSE {otherwise.sql()} END"
        keyword = "DISTINCT " if flag(distinct, False) else ""
        projection = sqlglot.parse_one(f"{aggregate}({keyword}{case})", dialect="spark")
        if flag(alias, True):
            # The value's text without its quotes ('a' names the column a), as SQLMesh names it.
            name = f"{option(prefix, '')}{value.name or value.sql()}{option(suffix, '')}"
            projection = exp.alias_(projection, exp.to_identifier(name, quoted=flag(quote, True)))
        projections.append(projection)
    return projections
