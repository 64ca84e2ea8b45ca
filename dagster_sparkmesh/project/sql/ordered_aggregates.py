"""``ARRAY_AGG`` as the source dialect computes it, written in Spark SQL.

sqlglot writes every dialect's ``ARRAY_AGG`` as Spark's ``COLLECT_LIST``, which has no ORDER BY of its own (sqlglot
drops it: ``ARRAY_AGG(x ORDER BY y DESC)[1]``, the usual "top x per group", picked whatever row came first) and skips
NULL elements, which DuckDB, PostgreSQL, Trino and BigQuery keep (or, for BigQuery, refuse). Here the elements are
collected as structs (a struct holding a NULL is kept) with their sort keys, sorted by a comparator that follows
each key's direction and NULL placement as the source dialect reads them (sqlglot sets ``nulls_first`` from the
dialect's default), then unwrapped. ``IGNORE NULLS`` and Snowflake's ``ARRAY_AGG`` (which omits NULLs) collect only
the rows whose element is not NULL. BigQuery's ``LIMIT n`` after the ORDER BY keeps the first n elements of that
order (``SLICE``): sqlglot left it inside the aggregate, which Spark refused ("the top player per team",
``ARRAY_AGG(x ORDER BY y DESC LIMIT 1)[OFFSET(0)]``). An aggregate used as a window, under FILTER or with DISTINCT
and an ORDER BY is left as sqlglot writes it.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

_NULLS_DROPPED = frozenset({"snowflake"})
_STRUCT = "sparkmesh_struct"


def ordered_array_agg(node: exp.Expression, dialect: str) -> exp.Expression:
    """``node`` rewritten when it is an ARRAY_AGG (or one under IGNORE NULLS) whose Spark spelling would differ."""
    if isinstance(node, exp.IgnoreNulls) and isinstance(node.this, exp.ArrayAgg):
        return _collected(node.this, keep_nulls=False) or node
    if not isinstance(node, exp.ArrayAgg) or isinstance(node.parent, (exp.IgnoreNulls, exp.Window, exp.Filter)):
        return node
    return _collected(node, keep_nulls=dialect not in _NULLS_DROPPED and not node.args.get("nulls_excluded")) or node


def _collected(aggregate: exp.ArrayAgg, keep_nulls: bool) -> exp.Expression | None:
    argument = aggregate.this
    if isinstance(argument, exp.Limit):
        return _limited(aggregate, argument, keep_nulls)
    ordered = list(argument.expressions) if isinstance(argument, exp.Order) else []
    value = argument.this if isinstance(argument, exp.Order) else argument
    if isinstance(value, exp.Distinct) or (not ordered and not keep_nulls):
        return None
    fields: list[exp.Expression] = []
    for index, key in enumerate(ordered):
        fields += [exp.Literal.string(f"_k{index}"), key.this.copy()]
    fields += [exp.Literal.string("_v"), value.copy()]
    element: exp.Expression = exp.Anonymous(this="NAMED_STRUCT", expressions=fields)
    if not keep_nulls:  # COLLECT_LIST skips the NULL a CASE without ELSE gives
        element = exp.Case(ifs=[exp.If(this=exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null())), true=element)])
    collected = f"COLLECT_LIST({_STRUCT})"
    if ordered:
        collected = f"ARRAY_SORT({collected}, (sparkmesh_l, sparkmesh_r) -> {_comparison(ordered, 0)})"
    template = sqlglot.parse_one(f"TRANSFORM({collected}, sparkmesh_e -> sparkmesh_e._v)", read="spark")
    placeholder = next(column for column in template.find_all(exp.Column) if column.name == _STRUCT)
    placeholder.replace(element)
    return template


def _limited(aggregate: exp.ArrayAgg, limit: exp.Limit, keep_nulls: bool) -> exp.Expression | None:
    """The first ``n`` elements of the aggregate without its LIMIT (BigQuery's ``ARRAY_AGG(... LIMIT n)``). Without
    an ORDER BY, and without NULLs to keep, it is COLLECT_LIST itself (which skips NULLs), cut alike."""
    unlimited = aggregate.copy()
    unlimited.set("this", limit.this.copy())
    collected = _collected(unlimited, keep_nulls)
    if collected is None and isinstance(limit.this, exp.Order):
        return None  # DISTINCT with an ORDER BY: as without LIMIT
    return exp.Anonymous(this="SLICE", expressions=[collected or unlimited, exp.Literal.number(1), limit.expression.copy()])


def _comparison(ordered: list[exp.Ordered], index: int) -> str:
    """-1, 0 or 1 for the elements ``sparkmesh_l`` and ``sparkmesh_r``, by the keys from ``index`` on."""
    if index == len(ordered):
        return "0"
    key, rest = ordered[index], _comparison(ordered, index + 1)
    first = -1 if key.args.get("nulls_first") else 1
    before = 1 if key.args.get("desc") else -1
    left, right = f"sparkmesh_l._k{index}", f"sparkmesh_r._k{index}"
    return (
        f"CASE WHEN {left} IS NULL AND {right} IS NULL THEN {rest} WHEN {left} IS NULL THEN {first} "
        f"WHEN {right} IS NULL THEN {-first} WHEN {left} < {right} THEN {before} "
        f"WHEN {left} > {right} THEN {-before} ELSE {rest} END"
    )
