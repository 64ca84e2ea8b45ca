"""Percentiles as the source dialects compute them, written in Spark SQL that survives sqlglot's round trip (part of
``dialect_functions``).

sqlglot writes ``PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x)`` (and ``_DISC``) as Spark's ``PERCENTILE_APPROX``,
which does not interpolate and reads DESC as ASC: a median of 5.5 where PostgreSQL, DuckDB and SQLMesh give 6.0.
Spark's own WITHIN GROUP spelling is no way out: the canonical query goes through sqlglot again when it is rendered,
which turns it back into ``PERCENTILE_APPROX``. So:

- a continuous percentile is Spark's exact ``PERCENTILE(x, p)`` (``1 - p`` when DESC), DuckDB's ``QUANTILE_CONT(x,
  p)`` too (Spark refused the two-argument PERCENTILE_CONT); it works as a window as well;
- an ascending discrete one, DuckDB's ``QUANTILE_DISC(x, p)`` and BigQuery's ``PERCENTILE_DISC(x, p) OVER`` (which
  Spark refused) are ``PERCENTILE_APPROX(x, p, 1000000)``: a relative error of 1e-6, exact below about half a million
  rows a group (checked against Spark's PERCENTILE_DISC), of the value's type as DuckDB's; a descending one is left
  as sqlglot writes it.
"""

from __future__ import annotations

from decimal import Decimal

from sqlglot import exp

_DISCRETE_ACCURACY = 1_000_000


def exact_percentile(node: exp.Expression) -> exp.Expression:
    """``node`` as Spark SQL computing the dialect's percentile; ``node`` itself when it is none."""
    if isinstance(node, exp.WithinGroup) and isinstance(node.this, (exp.PercentileCont, exp.PercentileDisc)):
        return _within_group(node) if node.this.expression is None else node
    if isinstance(node, exp.PercentileDisc) and node.expression is not None:
        return _discrete(node.this, node.expression)
    if isinstance(node, exp.PercentileCont) and node.expression is not None:
        return exp.Anonymous(this="PERCENTILE", expressions=[node.this, node.expression])
    return node


def _within_group(node: exp.WithinGroup) -> exp.Expression:
    order = node.expression.expressions if isinstance(node.expression, exp.Order) else []
    if len(order) != 1:
        return node
    value, descending = order[0].this, bool(order[0].args.get("desc"))
    fraction = node.this.this
    if isinstance(node.this, exp.PercentileCont):  # interpolated: the (1 - p) of the ascending values when DESC
        return exp.Anonymous(this="PERCENTILE", expressions=[value, _complement(fraction) if descending else fraction])
    return node if descending else _discrete(value, fraction)


def _discrete(value: exp.Expression, fraction: exp.Expression) -> exp.Expression:
    accuracy = exp.Literal.number(_DISCRETE_ACCURACY)
    return exp.Anonymous(this="PERCENTILE_APPROX", expressions=[value, fraction, accuracy])


def _complement(fraction: exp.Expression) -> exp.Expression:
    if isinstance(fraction, exp.Literal) and not fraction.is_string:
        return exp.Literal.number(str(1 - Decimal(fraction.name)))
    return exp.Sub(this=exp.Literal.number(1), expression=exp.paren(fraction.copy()))
