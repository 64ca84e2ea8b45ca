"""LIKE patterns of dialects without a default escape character, written so that Spark matches what they match
(part of ``dialect_functions``).

In DuckDB, SQLite, T-SQL, Trino, Presto and Athena a backslash in a LIKE pattern is an ordinary character unless the
query names an ``ESCAPE``: DuckDB's ``x LIKE 'a\\_%'`` matches ``a\\b``. Spark's LIKE escapes with the backslash by
default, so the same pattern matched ``a_b`` there, silently other rows (and a backslash before any other character
is an error in Spark). sqlglot keeps the pattern as written. Each backslash of such a pattern is doubled, which
Spark reads as one literal backslash: a literal pattern is written so, another expression is wrapped in
``REPLACE``. A LIKE with its own ``ESCAPE`` means the same in both and is left as written. The same for the
patterns of SQLMesh's LIKE audits (``match_like_pattern_list``), which SQLMesh runs in the model's dialect.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

NO_DEFAULT_ESCAPE = frozenset({"duckdb", "sqlite", "tsql", "trino", "presto", "athena"})
_BACKSLASH = "\\"
_LIKE_AUDITS = frozenset({"match_like_pattern_list", "not_match_like_pattern_list"})


def literal_backslashes(node: exp.Expression, dialect: str) -> exp.Expression:
    """``node`` (a LIKE or ILIKE of ``dialect``) with its pattern's backslashes literal in Spark; ``node`` itself
    when nothing changes."""
    if not isinstance(node, (exp.Like, exp.ILike)) or dialect not in NO_DEFAULT_ESCAPE:
        return node
    if isinstance(node.parent, exp.Escape) and node.arg_key == "this":
        return node
    pattern = node.expression
    if isinstance(pattern, (exp.Any, exp.All)) and isinstance(pattern.this, exp.Tuple):
        for element in pattern.this.expressions:
            element.replace(_escaped(element))
        return node
    node.set("expression", _escaped(pattern))
    return node


def like_audit_arguments(audit: str, args: tuple[tuple[str, str], ...], dialect: str) -> tuple[tuple[str, str], ...]:
    """An audit call's arguments (name, Spark SQL text), the patterns of a LIKE audit of ``dialect`` with their
    backslashes literal in Spark, as a model's LIKE's are."""
    if audit.removesuffix("_non_blocking") not in _LIKE_AUDITS or dialect not in NO_DEFAULT_ESCAPE:
        return args
    return tuple((name, _escaped_list(text) if name == "patterns" else text) for name, text in args)


def _escaped_list(text: str) -> str:
    patterns = sqlglot.parse_one(text, dialect="spark")
    if isinstance(patterns, exp.Tuple):
        patterns = exp.Tuple(expressions=[_escaped(pattern.copy()) for pattern in patterns.expressions])
    else:
        patterns = _escaped(patterns)
    return patterns.sql(dialect="spark", comments=False)


def _escaped(pattern: exp.Expression) -> exp.Expression:
    if isinstance(pattern, exp.Literal):
        if not pattern.is_string or _BACKSLASH not in pattern.this:
            return pattern
        return exp.Literal.string(pattern.this.replace(_BACKSLASH, _BACKSLASH * 2))
    if isinstance(pattern, exp.Null):
        return pattern
    return exp.Anonymous(
        this="REPLACE",
        expressions=[pattern, exp.Literal.string(_BACKSLASH), exp.Literal.string(_BACKSLASH * 2)],
    )
