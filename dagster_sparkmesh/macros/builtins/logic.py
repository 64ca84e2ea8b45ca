"""``@AND(...)`` / ``@OR(...)``: the operands joined, NULL operands (e.g. an @IF that said no) left out."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from dagster_sparkmesh.macros.builtins._common import builtin


def _operands(args: tuple[Any, ...]) -> list[exp.Expression]:
    return [arg for arg in args if isinstance(arg, exp.Expression) and not isinstance(arg, exp.Null)]


@builtin
def and_(evaluator: Any, *args: Any) -> exp.Expression:
    operands = _operands(args)
    return exp.and_(*operands, copy=False) if operands else exp.true()


@builtin
def or_(evaluator: Any, *args: Any) -> exp.Expression:
    operands = _operands(args)
    return exp.or_(*operands, copy=False) if operands else exp.false()
