"""Evaluating SQL at macro time: ``@IF`` conditions, ``@EVAL``, ``@FILTER`` predicates.

sqlglot's simplifier folds constant arithmetic, comparisons and boolean logic; what it leaves (``IN`` lists,
string functions) goes to sqlglot's Python executor, which runs a one-row ``SELECT``.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.simplify import simplify

from dagster_sparkmesh.macros.values import literal, python_value


class NotConstant(ValueError):
    """The expression still reads columns (or unknown functions) after macro expansion."""


def evaluate(expression: exp.Expression) -> exp.Expression:
    """``expression`` reduced to a literal (or boolean); unchanged when it reads columns."""
    simplified = simplify(expression.copy())
    if isinstance(simplified, (exp.Literal, exp.Boolean, exp.Null)):
        return simplified
    if simplified.find(exp.Column, exp.Placeholder) is not None:
        return simplified
    try:
        from sqlglot.executor import execute

        table = execute(exp.select(simplified.as_("v")))
    except Exception:  # the executor supports a subset of SQL: leave the rest as written
        return simplified
    return literal(table.rows[0][0]) if table.rows else simplified


def truth(expression: exp.Expression) -> bool:
    """The boolean value of a condition; raises NotConstant when it cannot be decided at macro time."""
    value = evaluate(expression)
    if isinstance(value, exp.Boolean):
        return bool(value.this)
    if isinstance(value, exp.Null):
        return False
    if isinstance(value, exp.Literal):
        raw = python_value(value)
        if isinstance(raw, str):
            return raw.lower() not in ("", "false", "0")
        return bool(raw)
    compared = _column_comparison(expression)
    if compared is not None:
        return compared
    raise NotConstant(expression.sql())


def _column_comparison(expression: exp.Expression) -> bool | None:
    """``a <> c`` over column references (``@FILTER([a, b, c], x -> x <> c)``): SQLMesh compares the references
    themselves at macro time, so two columns are equal when they are the same column as written."""
    if isinstance(expression, (exp.EQ, exp.NEQ)):
        left, right = expression.this, expression.expression
        if isinstance(left, exp.Column) and isinstance(right, exp.Column):
            same = left == right
            return same if isinstance(expression, exp.EQ) else not same
    return None
