"""One value of a ``MODEL (...)`` property, with its position in the file for precise errors.

Values are read by hand (words, strings, lists, booleans, integers): that is exact about positions and an order
of magnitude faster than handing each small value to a SQL parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.macros import sql_text

_ARRAY = re.compile(r"ARRAY\s*[\[(]", re.IGNORECASE)
_BARE = re.compile(r"^[^\s(),\[\]'\"`]+$")
_WORD = re.compile(r'^[`"]?([A-Za-z_][A-Za-z0-9_]*)[`"]?$')
_INT = re.compile(r"^\d+$")


@dataclass(frozen=True)
class Value:
    text: str
    """The value as written (stripped, comments blanked); always ``source[offset:offset + len(text)]``."""
    offset: int
    source: str
    """The whole file text (comments blanked), for positions."""
    path: Path

    @property
    def line(self) -> int:
        return sql_text.line_col(self.source, self.offset)[0]

    def error(self, message: str, hint: str) -> ProjectError:
        line, col = sql_text.line_col(self.source, self.offset)
        return ProjectError(
            message,
            path=self.path,
            line=line,
            col=col,
            snippet=sql_text.line_at(self.source, self.offset),
            hint=hint,
        )

    def sub(self, start: int, end: int) -> Value:
        """The stripped slice ``text[start:end]`` as a Value of its own."""
        raw = self.text[start:end]
        lead = len(raw) - len(raw.lstrip())
        return Value(raw.strip(), self.offset + start + lead, self.source, self.path)

    def is_list(self) -> bool:
        return self._opening() is not None

    def items(self) -> list[Value]:
        """``(a, b)``, ``[a, b]`` or ``ARRAY[a, b]`` → its items; anything else is a list of one."""
        opening = self._opening()
        if opening is None:
            return [self] if self.text else []
        pieces = sql_text.split_top_level(self.source, opening + 1, self.offset + len(self.text) - 1)
        return [Value(piece.text, piece.offset, self.source, self.path) for piece in pieces]

    def _opening(self) -> int | None:
        """The offset in the source of the bracket that opens the list the whole value is, if it is one (SQLMesh
        reads ``ARRAY[a, b]`` and ``ARRAY(a, b)`` as the list they spell)."""
        spelled_array = _ARRAY.match(self.text)
        start = self.offset + (spelled_array.end() - 1 if spelled_array else 0)
        if self.source[start:start + 1] not in ("(", "["):
            return None
        return start if sql_text.matching_close(self.source, start) == self.offset + len(self.text) - 1 else None

    def scalar(self) -> str:
        """A quoted string (unescaped) or a bare word."""
        text = self.text
        if len(text) >= 2 and text[0] in ("'", '"') and text[-1] == text[0]:
            quote = text[0]
            return text[1:-1].replace(quote * 2, quote).replace("\\" + quote, quote)
        if not _BARE.match(text):
            raise self.error(f"expected a single value, got {text!r}", "quote text values: 'like this'")
        return text

    def word(self) -> str:
        """An identifier, possibly quoted."""
        match = _WORD.match(self.text)
        if not match:
            raise self.error(f"expected a name, got {self.text!r}", "use letters, digits and underscores")
        return match.group(1)

    def boolean(self) -> bool:
        lowered = self.text.lower()
        if lowered not in ("true", "false"):
            raise self.error(f"expected true or false, got {self.text!r}", "write true or false")
        return lowered == "true"

    def integer(self) -> int:
        if not _INT.match(self.text):
            raise self.error(f"expected a whole number, got {self.text!r}", "write a non-negative integer")
        return int(self.text)
