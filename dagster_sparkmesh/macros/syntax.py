"""SQLMesh macro syntax → plain SQL that sqlglot parses, with sentinel names the evaluator recognises.

sqlglot's dialects disagree on ``@`` (DuckDB reads ``@x`` as ``ABS(x)``, Spark as a parameter), and SQLMesh's
clause operators (``@WHERE(cond) a = 1``) are not SQL at all. So before parsing, each macro token is rewritten
into ordinary SQL whose names carry the macro: calls become functions ``__smc_<name>(...)``, variables become
columns ``__smv_<name>``, ``@{x}`` / ``col_@x`` interpolation becomes ``__smi_<x>_ims__`` inside the identifier,
and clause operators become the clause itself with a marker (``WHERE __smk_where(cond) OR <body>``: OR binds
loosest, so the marker is always the leftmost operand) that the evaluator removes or uses to drop the clause.
String literals and comments are never touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.macros import sql_text

CALL = "__smc_"
VARIABLE = "__smv_"
CLAUSE = "__smk_"
INTERPOLATION = re.compile(r"__smi_(\w+?)_ims__", re.IGNORECASE)
_IDENTIFIER_CHAR = re.compile(r"[A-Za-z0-9_]")
DEFERRED_CALL = re.compile(r"@[A-Za-z_]\w*\s*\(")
"""A macro call kept in a stored query because it waits for an interval."""
LEFTOVER = re.compile(r"__sm[cvki]_", re.IGNORECASE)
"""A sentinel that survived expansion: a macro the evaluator could not place."""

# Text for a clause operator ``@WHERE(<cond>)``: what replaces ``@WHERE(``, what follows its closing bracket.
_CLAUSES = {
    "where": ("WHERE __smk_where(", " OR "),
    "having": ("HAVING __smk_having(", " OR "),
    "group_by": ("GROUP BY __smk_group_by(", ", "),
    "order_by": ("ORDER BY __smk_order_by(", ", "),
    "limit": ("LIMIT __smk_limit(", " + "),
    "with": ("WITH __smk_with AS (SELECT ", ", "),
    # The marker is a table of its own joined ON TRUE; the real join that follows takes over its join type.
    "join": ("JOIN __smk_join(", " CROSS JOIN "),
}
CLAUSE_NAMES = frozenset(_CLAUSES)


@dataclass(frozen=True, slots=True)
class Source:
    """Where macro text came from, for errors: the file and the line of the text's first character."""

    path: Path | None
    first_line: int = 1
    text: str | None = None
    """The text as written, so errors can quote the line and point at the macro."""


def prepare(text: str, source: Source) -> str:
    """``text`` with every macro rewritten as sentinel SQL; the same length of lines (line numbers hold)."""
    if "@" not in text:
        return text
    parts: list[str] = []
    pending: dict[int, str] = {}
    last = 0
    for token in sql_text.tokens(text):
        if token.kind == "close" and token.start in pending:
            parts.append(text[last : token.end] + pending.pop(token.start))
            last = token.end
            continue
        if token.kind != "macro" or token.start < last:
            continue
        parts.append(text[last : token.start])
        parts.append(_rewrite(text, token, source, pending))
        last = token.end
    parts.append(text[last:])
    return _aliases_in_lambdas("".join(parts))


def _rewrite(text: str, token: sql_text.Token, source: Source, pending: dict[int, str]) -> str:
    raw = token.text
    if raw in ("@'", '@"'):
        raise macro_error("macro strings (@'...') are not supported", text, token.start, source,
                          "write the string as a normal literal, or build it with @SQL('...')")
    if raw.startswith("@{"):
        name = raw[2:].rstrip("}( \t")
        return f"__smi_{name}_ims__" + ("(" if raw.endswith("(") else "")
    name = raw[1:].rstrip("( \t")
    if raw.endswith("("):
        clause = _CLAUSES.get(name.lower())
        if clause is None:
            return f"{CALL}{name}("
        close = sql_text.matching_close(text, token.end - 1)
        if close is None:
            raise macro_error(f"@{name}( is never closed", text, token.start, source, "add the closing bracket")
        pending[close] = clause[1]
        return clause[0]
    before = text[token.start - 1] if token.start else ""
    if _IDENTIFIER_CHAR.match(before):
        return f"__smi_{name}_ims__"  # ``column_@x``: the value is appended to the identifier
    return f"{VARIABLE}{name}"


_CALL_START = re.compile(CALL + r"\w+\(", re.IGNORECASE)
_ARROW = re.compile(r"->")
_AS = re.compile(r"\bAS\b", re.IGNORECASE)
ALIAS = CALL + "_alias"
"""``x -> body AS name`` is written ``x -> __smc__alias(body, name)``: SQL lambdas take no alias, macro ones do."""


def _aliases_in_lambdas(text: str) -> str:
    if "->" not in text:
        return text
    starts = [match.end() - 1 for match in _CALL_START.finditer(text)]
    for open_offset in reversed(starts):  # innermost first: rewriting one call never moves an earlier start
        close = sql_text.matching_close(text, open_offset)
        if close is None or "->" not in text[open_offset:close]:
            continue  # no lambda among the arguments: splitting them would only cost time
        for piece in reversed(sql_text.split_top_level(text, open_offset + 1, close)):
            rewritten = _alias_lambda(piece.text)
            if rewritten is not None:
                text = text[: piece.offset] + rewritten + text[piece.offset + len(piece.text) :]
    return text


def _alias_lambda(piece: str) -> str | None:
    if "->" not in piece:
        return None
    masked = _top_level(piece)
    arrow = _ARROW.search(masked)
    alias = _AS.search(masked, arrow.end()) if arrow else None
    if arrow is None or alias is None:
        return None
    body, name = piece[arrow.end() : alias.start()], piece[alias.end() :]
    return f"{piece[: arrow.end()]} {ALIAS}({body.strip()}, {name.strip()})"


def _top_level(text: str) -> str:
    """``text`` with everything inside brackets, strings and comments blanked (same offsets)."""
    chars = list(text)
    depth = 0
    for token in sql_text.tokens(text):
        if token.kind == "open":
            depth += 1
            if depth == 1:
                start = token.end
        elif token.kind == "close":
            depth -= 1
            if depth == 0:
                chars[start : token.start] = " " * (token.start - start)
        elif token.kind in ("string", "comment") and depth == 0:
            chars[token.start : token.end] = " " * (token.end - token.start)
    return "".join(chars)


def macro_error(message: str, text: str, offset: int, source: Source, hint: str) -> ProjectError:
    line, col = sql_text.line_col(text, offset)
    return ProjectError(
        message,
        path=source.path,
        line=line + source.first_line - 1,
        col=col,
        snippet=sql_text.line_at(text, offset),
        hint=hint,
    )


def name_of(sentinel: str, prefix: str) -> str | None:
    """The macro name a sentinel carries (lower case), or None when ``sentinel`` is not one of ``prefix``."""
    if len(sentinel) > len(prefix) and sentinel[: len(prefix)].lower() == prefix:
        return sentinel[len(prefix) :].lower()
    return None
