"""Macros inside ``MODEL (...)`` properties (``owner @VAR('owner', 'me')``, ``audits (not_null(columns := @cols))``).

Only the macro spans are replaced, by the SQL they expand to, so the header reader still sees the property
written as before (a list stays a list) and its error positions keep pointing into the file.
"""

from __future__ import annotations

import sqlglot

from dagster_sparkmesh.macros import syntax
from dagster_sparkmesh.macros.evaluator import MacroEvaluator
from dagster_sparkmesh.macros import sql_text

# ``cron @daily`` is a schedule alias, not a macro.
_LITERAL_PROPERTIES = frozenset({"cron"})
# ``name @schema.person``: a variable in a name is its text (``omop.person``), as in SQLMesh, not a string literal.
_NAME_PROPERTIES = frozenset({"name"})


def expand_value(key: str, text: str, evaluator: MacroEvaluator) -> str:
    """``text`` (a property's value) with each macro span replaced by its expansion."""
    if "@" not in text or key in _LITERAL_PROPERTIES:
        return text
    parts: list[str] = []
    last = 0
    for token in sql_text.tokens(text):
        if token.kind != "macro" or token.start < last:
            continue
        end = _span_end(text, token)
        parts.append(text[last : token.start])
        parts.append(_expand_span(text[token.start : end], evaluator, as_name=key.lower() in _NAME_PROPERTIES))
        last = end
    parts.append(text[last:])
    return "".join(parts)


def _span_end(text: str, token: sql_text.Token) -> int:
    if not token.text.endswith("("):
        return token.end
    close = sql_text.matching_close(text, token.end - 1)
    return len(text) if close is None else close + 1


def _expand_span(span: str, evaluator: MacroEvaluator, *, as_name: bool = False) -> str:
    select = sqlglot.parse_one("SELECT " + syntax.prepare(span, evaluator.source), dialect=evaluator.dialect)
    expanded = evaluator.expand(select.expressions[0])
    items = expanded if isinstance(expanded, list) else [] if expanded is None else [expanded]
    return ", ".join(_name_part(item) if as_name else item.sql(dialect=evaluator.dialect) for item in items)


def _name_part(item) -> str:
    """A value inside a model name: a string's text, anything else as SQL."""
    if isinstance(item, sqlglot.exp.Literal) and item.is_string:
        return item.this
    return item.sql()
