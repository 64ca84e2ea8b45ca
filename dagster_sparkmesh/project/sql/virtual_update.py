"""``ON_VIRTUAL_UPDATE_BEGIN; ...; ON_VIRTUAL_UPDATE_END;`` in a SQL model file: statements run after a promotion
points the model's view at a new table (grants, comments), ``@this_model`` being the view.

The block is cut out of the file's text before parsing, each part keeping the other blanked, so the model's
statements and the block's are parsed as usual and every line number stays that of the file.
"""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.macros import sql_text

_BEGIN, _END = "on_virtual_update_begin", "on_virtual_update_end"


def split_virtual_update(body: str, path: Path) -> tuple[str, str | None]:
    """The model's statements and, when the file has a block, the block's statements (None without one)."""
    if "on_virtual_update_" not in body.lower():
        return body, None
    clean = sql_text.strip_comments(body)
    begin = end = None
    for start, stop in _statement_spans(clean):
        marker = clean[start:stop].strip(" \t\r\n;").lower()
        if marker == _BEGIN and begin is None:
            begin = (start, stop)
        elif marker == _BEGIN:
            raise _error(path, body, start, "a second ON_VIRTUAL_UPDATE_BEGIN before ON_VIRTUAL_UPDATE_END",
                         "close the first block with ON_VIRTUAL_UPDATE_END; (or merge both blocks)")
        elif marker == _END and begin is None:
            raise _error(path, body, start, "ON_VIRTUAL_UPDATE_END without ON_VIRTUAL_UPDATE_BEGIN",
                         "open the block with ON_VIRTUAL_UPDATE_BEGIN; before its statements")
        elif marker == _END:
            end = (start, stop)
            break
    if begin is None:
        return body, None  # the words appear only inside strings or comments
    if end is None:
        raise _error(path, body, begin[0], "ON_VIRTUAL_UPDATE_BEGIN without ON_VIRTUAL_UPDATE_END",
                     "end the block with ON_VIRTUAL_UPDATE_END;")
    block = sql_text.blank(body[: begin[1]]) + body[begin[1] : end[0]] + sql_text.blank(body[end[0] :])
    rest = body[: begin[0]] + sql_text.blank(body[begin[0] : end[1]]) + body[end[1] :]
    return rest, block


def _statement_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each top-level statement, its semicolon included (strings and comments skipped)."""
    spans, last = [], 0
    for token in sql_text.tokens(text):
        if token.kind == "semicolon":
            spans.append((last, token.end))
            last = token.end
    return [*spans, (last, len(text))]


def _error(path: Path, body: str, offset: int, message: str, hint: str) -> ProjectError:
    stripped = len(body[offset:]) - len(body[offset:].lstrip())  # the marker itself, not the newline before it
    line, col = sql_text.line_col(body, offset + stripped)
    return ProjectError(message, path=path, line=line, col=col, snippet=sql_text.line_at(body, offset + stripped), hint=hint)
