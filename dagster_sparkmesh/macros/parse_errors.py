"""What a SQL syntax error says to the user: sqlglot's description without the parser's internals.

sqlglot describes the token it stopped at by its Python repr (``<Token token_type: TokenType.SENTINEL, ...>``, where
SENTINEL is the end of the input) and a missing part by the class of the expression that lacked it. A user reads
neither: the token becomes its text (or "the end of the SQL"), the class the clause or function's name.
"""

from __future__ import annotations

import re

from sqlglot.errors import ParseError

_TOKEN = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+, col: \d+, start: \d+, end: \d+, comments: \[.*?\]>")
_MISSING = re.compile(r"Required keyword: '(\w+)' missing for <class 'sqlglot\.expressions\.(?:\w+\.)*(\w+)'>")


def parse_error_description(error: ParseError) -> str:
    """The first error's description, readable (the whole message when sqlglot gave no details)."""
    detail = error.errors[0] if error.errors else {}
    return readable(detail.get("description") or str(error).splitlines()[0])


def readable(description: str) -> str:
    text = _TOKEN.sub(_token_text, description)
    return _MISSING.sub(lambda match: f"{_part(match.group(2))} is incomplete", text)


def _token_text(match: re.Match) -> str:
    return "the end of the SQL" if match.group(1) == "SENTINEL" else repr(match.group(2))


_CLAUSES = {"Where": "a WHERE clause", "Having": "a HAVING clause", "Qualify": "a QUALIFY clause",
            "Group": "a GROUP BY clause", "Order": "an ORDER BY clause", "Join": "a JOIN"}


def _part(class_name: str) -> str:
    return _CLAUSES.get(class_name) or re.sub(r"(?<=[a-z])(?=[A-Z])", "_", class_name).upper()
