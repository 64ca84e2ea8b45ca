"""Lexical scanning of raw SQL text: find what matters while skipping string literals and comments.

One compiled regex jumps from one interesting token to the next, so scanning a model file costs a few regex
matches instead of a Python loop over every character (1,000 models must load cold in well under 2 s).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# Strings accept both backslash escapes (Spark, Hive) and doubled quotes (ANSI, DuckDB); comments may be
# unterminated at the end of the file. Every alternative before ``other`` is skipped by callers.
_TOKEN = re.compile(
    r"""
      (?P<string>'(?:[^'\\]|\\.|'')*'?|"(?:[^"\\]|\\.|"")*"?|`(?:[^`]|``)*`?)
    | (?P<comment>--[^\n]*|/\*[\s\S]*?(?:\*/|\Z))
    | (?P<jinja>\{\{|\{%|\{\#)
    | (?P<macro>@\{?[A-Za-z_][A-Za-z0-9_]*\}?(?:[ \t]*\()?|@'|@")
    | (?P<open>[(\[])
    | (?P<close>[)\]])
    | (?P<comma>,)
    | (?P<semicolon>;)
    """,
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    """One of string, comment, jinja, macro, open, close, comma, semicolon."""
    text: str
    start: int
    end: int


def tokens(text: str, start: int = 0, end: int | None = None) -> Iterator[Token]:
    for match in _TOKEN.finditer(text, start, len(text) if end is None else end):
        kind = match.lastgroup or ""
        yield Token(kind, match.group(), match.start(), match.end())


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def line_at(text: str, offset: int) -> str:
    """The full source line containing ``offset`` (used as an error snippet)."""
    begin = text.rfind("\n", 0, offset) + 1
    stop = text.find("\n", offset)
    return text[begin : len(text) if stop == -1 else stop]


def matching_close(text: str, open_offset: int) -> int | None:
    """Offset of the bracket closing the one at ``open_offset``, or None when it is never closed."""
    depth = 0
    for token in tokens(text, open_offset):
        if opens(token):
            depth += 1
        elif token.kind == "close":
            depth -= 1
            if depth == 0:
                return token.start
    return None


def opens(token: Token) -> bool:
    """A bracket opens here: ``(`` / ``[``, or a macro call ``@name(`` whose token includes its bracket."""
    return token.kind == "open" or (token.kind == "macro" and token.text.endswith("("))


@dataclass(frozen=True, slots=True)
class Piece:
    text: str
    """Stripped text of one comma-separated item."""
    offset: int
    """Offset of the item's first non-blank character in the scanned text."""


def split_top_level(text: str, start: int, end: int) -> list[Piece]:
    """Split ``text[start:end]`` at commas outside brackets, strings and comments; empty items are dropped."""
    pieces: list[Piece] = []
    depth = 0
    item_start = start
    for token in tokens(text, start, end):
        if opens(token):
            depth += 1
        elif token.kind == "close":
            depth -= 1
        elif token.kind == "comma" and depth == 0:
            _append_piece(pieces, text, item_start, token.start)
            item_start = token.end
    _append_piece(pieces, text, item_start, end)
    return pieces


def _append_piece(pieces: list[Piece], text: str, start: int, end: int) -> None:
    raw = strip_comments(text[start:end])
    stripped = raw.strip()
    if stripped:
        lead = len(raw) - len(raw.lstrip())
        pieces.append(Piece(stripped, start + lead))


def strip_comments(text: str) -> str:
    """Replace comments by spaces (newlines kept), so offsets and line numbers do not move."""
    if "--" not in text and "/*" not in text:
        return text
    parts: list[str] = []
    last = 0
    for token in tokens(text):
        if token.kind == "comment":
            parts.append(text[last : token.start])
            parts.append(blank(token.text))
            last = token.end
    parts.append(text[last:])
    return "".join(parts)


def blank(text: str) -> str:
    """Same length, newlines kept, everything else a space: hides text without moving line numbers."""
    return re.sub(r"[^\n]", " ", text)
