"""The SQL clause operators ``@WITH``, ``@JOIN``, ``@WHERE``, ``@GROUP_BY``, ``@HAVING``, ``@ORDER_BY``, ``@LIMIT``.

``syntax.prepare`` wrote each as the clause itself plus a marker carrying the condition (see there); here, once
the condition is expanded, the marker is removed and the clause kept, or the whole clause dropped. A condition
that still waits for an interval (``@WHERE(@start_ds > '2024-01-01')``) keeps its marker: rendering decides.
"""

from __future__ import annotations

from typing import Protocol

from sqlglot import exp

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.macros import syntax
from dagster_sparkmesh.macros.evaluation import NotConstant, truth


class ErrorAtNode(Protocol):
    """What clause operators need of the evaluator (``macros.evaluator`` passes itself): an error at a node."""

    def error(self, message: str, node: exp.Expression, hint: str, *, macro: str | None = None) -> ProjectError: ...


def resolve(evaluator: ErrorAtNode, node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, (exp.Where, exp.Having)):
        return _filter(evaluator, node)
    if isinstance(node, (exp.Group, exp.Order)):
        return _first_item(evaluator, node)
    if isinstance(node, exp.Limit):
        return _limit(evaluator, node)
    if isinstance(node, exp.With):
        return _with(evaluator, node)
    if node.args.get("joins"):
        _joins(evaluator, node)
    return node


def _marker(node: exp.Expression | None) -> exp.Anonymous | None:
    if isinstance(node, exp.Anonymous) and isinstance(node.this, str) and syntax.name_of(node.this, syntax.CLAUSE):
        return node
    return None


def _decide(evaluator: ErrorAtNode, marker: exp.Anonymous) -> bool | None:
    """True/False, or None while the condition waits for rendering."""
    (condition,) = marker.expressions or [exp.true()]
    if _waits(condition):
        return None
    try:
        return truth(condition)
    except NotConstant:
        name = syntax.name_of(marker.this, syntax.CLAUSE) or ""
        raise evaluator.error(f"the condition of @{name.upper()} is not constant: {condition.sql()}", marker,
                              "the condition must be decidable from macro values (no column references)") from None


def _waits(condition: exp.Expression) -> bool:
    return any(isinstance(n, exp.Var) and n.name.startswith("@") for n in condition.walk())


def _filter(evaluator: ErrorAtNode, node: exp.Where | exp.Having) -> exp.Expression | None:
    top = node.this
    parent, leftmost = None, top
    while isinstance(leftmost, exp.Or):
        parent, leftmost = leftmost, leftmost.this
    marker = _marker(leftmost)
    if marker is None:
        return node
    decision = _decide(evaluator, marker)
    if decision is None:
        return node
    if not decision:
        return None
    rest = parent.expression
    if parent is top:
        node.set("this", rest)
    else:
        parent.replace(rest)
    return node


def _first_item(evaluator: ErrorAtNode, node: exp.Group | exp.Order) -> exp.Expression | None:
    items = node.expressions
    first = items[0].this if items and isinstance(items[0], exp.Ordered) else (items[0] if items else None)
    marker = _marker(first)
    if marker is None:
        return node
    decision = _decide(evaluator, marker)
    if decision is None:
        return node
    if not decision:
        return None
    node.set("expressions", items[1:])
    return node


def _limit(evaluator: ErrorAtNode, node: exp.Limit) -> exp.Expression | None:
    value = node.expression
    if not isinstance(value, exp.Add) or _marker(value.this) is None:
        return node
    decision = _decide(evaluator, value.this)
    if decision is None:
        return node
    if not decision:
        return None
    node.set("expression", value.expression)
    return node


def _with(evaluator: ErrorAtNode, node: exp.With) -> exp.Expression | None:
    ctes = node.expressions
    if not ctes or syntax.name_of(ctes[0].alias, syntax.CLAUSE) is None:
        return node
    select = ctes[0].this
    marker = exp.Anonymous(this=ctes[0].alias, expressions=list(select.expressions[:1]))
    decision = _decide(evaluator, marker)
    if decision is None:
        return node
    if not decision or len(ctes) == 1:
        return None
    node.set("expressions", ctes[1:])
    return node


def _joins(evaluator: ErrorAtNode, node: exp.Expression) -> None:
    """``LEFT @JOIN(c) t ON ...`` was written ``LEFT JOIN marker(c) ON TRUE CROSS JOIN t ON ...``."""
    joins = list(node.args["joins"])
    result: list[exp.Expression] = []
    index = 0
    while index < len(joins):
        join = joins[index]
        marker = _marker(join.this.this) if isinstance(join.this, exp.Table) else None
        if marker is None or index + 1 == len(joins):
            result.append(join)
            index += 1
            continue
        decision = _decide(evaluator, marker)
        real = joins[index + 1]
        if decision is None:
            result.extend((join, real))
        elif decision:
            for key in ("side", "kind", "method"):
                real.set(key, join.args.get(key))
            result.append(real)
        index += 2
    node.set("joins", result)
