"""``@SAFE_ADD`` / ``@SAFE_SUB``: NULLs count as 0 unless all operands are NULL; ``@SAFE_DIV``: NULL for a 0 divisor."""

from __future__ import annotations

from functools import reduce
from typing import Any

from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin


def _safe(args: tuple[Any, ...], operator: type[exp.Binary]) -> exp.Expression:
    all_null = exp.and_(*(exp.Is(this=arg.copy(), expression=exp.Null()) for arg in args), copy=False)
    coalesced = [exp.func("COALESCE", arg.copy(), exp.Literal.number(0)) for arg in args]
    total = reduce(lambda left, right: operator(this=left, expression=right), coalesced)
    return exp.Case(ifs=[exp.If(this=all_null, true=exp.Null())], default=total)


@builtin
def safe_add(evaluator: Any, *args: Any) -> exp.Expression:
    return _safe(args, exp.Add)


@builtin
def safe_sub(evaluator: Any, *args: Any) -> exp.Expression:
    return _safe(args, exp.Sub)


@builtin
def safe_div(evaluator: Any, numerator: Any, denominator: Any) -> exp.Expression:
    return exp.Div(this=numerator, expression=exp.Nullif(this=denominator, expression=exp.Literal.number(0)))
