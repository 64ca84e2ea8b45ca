"""A file's SQL statements: macro syntax prepared, parsed, and expanded by one evaluator (so ``@DEF`` in one
statement is seen by the next). What the loader stores and what the renderer runs both come from here."""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from dagster_sparkmesh.macros import syntax
from dagster_sparkmesh.macros.evaluator import MacroEvaluator
from dagster_sparkmesh.macros import sql_text

TIME_MACROS = frozenset(
    f"{prefix}_{suffix}"
    for prefix in ("start", "end")
    for suffix in ("ds", "date", "ts", "dt", "epoch", "millis")
) | frozenset(f"execution_{suffix}" for suffix in ("ds", "ts", "dt", "date", "epoch", "millis"))
RENDER_TIME = TIME_MACROS | {"this_model", "runtime_stage"}
"""Macro variables whose value only rendering for an interval knows: while loading they stay placeholders."""

_STATEMENT_CALL = re.compile(r"\s*" + syntax.CALL + r"(\w+)\(", re.IGNORECASE)


def parse(text: str, dialect: str, source: syntax.Source) -> list[exp.Expression]:
    """The statements of ``text`` with macros as sentinels; raises sqlglot's ParseError with lines of ``text``."""
    prepared = syntax.prepare(text, source)
    try:
        return [statement for statement in sqlglot.parse(prepared, dialect=dialect) if statement is not None]
    except ParseError:
        pieces = _statements(prepared)
        if not any(_STATEMENT_CALL.match(piece) for _, piece in pieces):
            raise
    # A statement-level macro may take whole statements as arguments (``@IF(cond, ALTER TABLE ...);``).
    statements: list[exp.Expression] = []
    for offset, piece in pieces:
        padded = "\n" * prepared.count("\n", 0, offset) + piece  # keeps error line numbers those of ``text``
        statements.extend(_parse_call(padded, dialect) if _STATEMENT_CALL.match(piece) else
                          [s for s in sqlglot.parse(padded, dialect=dialect) if s is not None])
    return statements


def expand(statements: list[exp.Expression], evaluator: MacroEvaluator) -> list[exp.Expression]:
    """Every statement expanded; ``@DEF`` and a false ``@IF(...)`` statement leave nothing."""
    result: list[exp.Expression] = []
    for statement in statements:
        expanded = evaluator.expand(statement)
        if isinstance(expanded, list):
            result.extend(expanded)
        elif expanded is not None:
            result.append(expanded)
    return result


def _statements(text: str) -> list[tuple[int, str]]:
    pieces = []
    start = 0
    depth = 0
    for token in sql_text.tokens(text):
        if token.kind == "open":
            depth += 1
        elif token.kind == "close":
            depth -= 1
        elif token.kind == "semicolon" and depth == 0:
            pieces.append((start, text[start : token.start]))
            start = token.end
    pieces.append((start, text[start:]))
    return [(offset, piece) for offset, piece in pieces if sql_text.strip_comments(piece).strip()]


def _parse_call(text: str, dialect: str) -> list[exp.Expression]:
    match = _STATEMENT_CALL.search(text)
    assert match is not None
    open_offset = match.end() - 1
    close = sql_text.matching_close(text, open_offset)
    if close is None:
        raise ParseError(f"the macro call {match.group(1)}( is never closed")
    arguments = []
    for piece in sql_text.split_top_level(text, open_offset + 1, close):
        padded = "\n" * text.count("\n", 0, piece.offset) + piece.text
        arguments.append(_parse_argument(padded, dialect))
    return [exp.Anonymous(this=syntax.CALL + match.group(1), expressions=arguments)]


def _parse_argument(text: str, dialect: str) -> exp.Expression:
    """An argument as an expression when it is one, else as a statement (``ALTER TABLE ...``)."""
    try:
        call = sqlglot.parse_one(f"SELECT __arg({text})", dialect=dialect)
        return call.expressions[0].expressions[0]
    except ParseError:
        return sqlglot.parse_one(text, dialect=dialect)
