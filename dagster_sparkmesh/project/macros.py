"""What the loader still refuses of SQLMesh's macro syntax, and the names of the render-time macros.

The macro language itself lives in ``dagster_sparkmesh.macros``; this module keeps the project-side pieces: Jinja
(not supported yet) is refused with the file and line, and ``TIME_MACROS`` / ``BUILTIN_MACROS`` name the macro
variables whose value only rendering for an interval knows.
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlglot import exp

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.macros.expansion import TIME_MACROS
from dagster_sparkmesh.macros.values import literal
from dagster_sparkmesh.project import sql_text

BUILTIN_MACROS = TIME_MACROS | {"this_model"}

SENTINEL_PREFIX = "__sparkmesh_macro__"
_JINJA_QUERY = re.compile(r"\bJINJA_(?:QUERY|STATEMENT)_BEGIN\b", re.IGNORECASE)


def refuse_jinja(text: str, path: Path) -> None:
    """Jinja is not rendered yet: refuse it where it starts rather than parse template text as SQL."""
    jinja = _JINJA_QUERY.search(text)
    if jinja:
        _refuse(text, jinja.start(), jinja.group(), path, "Jinja blocks are not supported")
    if "{" not in text:
        return
    for token in sql_text.tokens(text):
        if token.kind == "jinja":
            _refuse(text, token.start, token.text, path, "Jinja templating is not supported; write plain SQL")


def _refuse(text: str, offset: int, what: str, path: Path, hint: str) -> None:
    line, col = sql_text.line_col(text, offset)
    raise ProjectError(
        f"unsupported macro {what}",
        path=path,
        line=line,
        col=col,
        snippet=sql_text.line_at(text, offset),
        hint=hint,
    )


def variable_literal(value: object) -> exp.Expression:
    return literal(value)
