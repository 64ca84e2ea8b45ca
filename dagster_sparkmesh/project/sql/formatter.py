"""``sparkmesh format``: rewrite SQL model files in sqlglot's pretty style, keeping the MODEL header verbatim.

The header is the user's own layout (aligned properties, comments) and is never touched; only the statements after
it are regenerated. Macros (``@start_ds``, ``@VAR('x')``) are hidden behind sentinel identifiers while sqlglot
formats, because Spark's dialect would print ``@start_ds`` as ``${start_ds}``. A formatted body must parse to the
same canonical SQL as the original: formatting that would change what a model computes (or its fingerprint) is a
bug, and the file is then refused rather than rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot.errors import SqlglotError

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.macros import sql_text
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.project.sql.header import read_header, split_model_file

_MACRO = "__sparkmesh_macro__"
_CALL = "__sparkmesh_call__"
_RESTORE = re.compile(rf"({_MACRO}|{_CALL})([A-Za-z0-9_]+)", re.IGNORECASE)


@dataclass(frozen=True)
class FormatResult:
    changed: tuple[Path, ...]
    """Files whose text differs from the formatted text (rewritten unless ``check``)."""
    unchanged: tuple[Path, ...]


def format_project(project: Project, *, check: bool = False) -> FormatResult:
    """Format every SQL model file of the project; with ``check`` nothing is written."""
    changed: list[Path] = []
    unchanged: list[Path] = []
    for path in _sql_model_files(project):
        text = path.read_text(encoding="utf-8")
        formatted = format_model_text(text, path, project.config.model_defaults.dialect)
        if formatted == text:
            unchanged.append(path)
            continue
        changed.append(path)
        if not check:
            _write_atomically(path, formatted)
    return FormatResult(changed=tuple(changed), unchanged=tuple(unchanged))


def _sql_model_files(project: Project) -> Iterable[Path]:
    return sorted({model.path for model in project.models.values() if model.source == "sql"})


def format_model_text(text: str, path: Path, default_dialect: str = "spark") -> str:
    """The file's header as written, a blank line, then its statements pretty-printed (one trailing newline)."""
    model_file = split_model_file(text, path)
    dialect = read_header(model_file, default_dialect).dialect or default_dialect
    body_start = len(model_file.body) - len(model_file.body.lstrip())
    header, body = text[:body_start].rstrip(), text[body_start:]
    hidden = _hide_macros(body, body_start, text, path)
    statements = _parse(hidden, dialect, path)
    pretty = ";\n\n".join(statement.sql(dialect=dialect, pretty=True) for statement in statements)
    _check_same_query(statements, _parse(pretty, dialect, path), dialect, path)
    formatted = _RESTORE.sub(_restored, pretty)
    return f"{header}\n\n{formatted}\n" if formatted else f"{header}\n"


def _hide_macros(body: str, offset: int, text: str, path: Path) -> str:
    parts: list[str] = []
    last = 0
    for token in sql_text.tokens(body):
        if token.kind != "macro":
            continue
        raw = token.text.rstrip("( \t")
        if raw.startswith("@{") or raw in ("@'", '@"'):
            line, col = sql_text.line_col(text, offset + token.start)
            raise ProjectError(
                f"cannot format a file using the macro {raw}",
                path=path, line=line, col=col, snippet=sql_text.line_at(text, offset + token.start),
                hint="only @name variables and @VAR(...) calls are supported in model files",
            )
        sentinel = f"{_CALL}{raw[1:]}(" if token.text.endswith("(") else f"{_MACRO}{raw[1:]}"
        parts.extend((body[last : token.start], sentinel))
        last = token.end
    parts.append(body[last:])
    return "".join(parts)


def _restored(match: re.Match[str]) -> str:
    return f"@{match.group(2)}"


def _parse(sql: str, dialect: str, path: Path) -> list[sqlglot.exp.Expression]:
    try:
        return [statement for statement in sqlglot.parse(sql, dialect=dialect) if statement is not None]
    except SqlglotError as error:
        raise ProjectError(
            f"cannot format {path.name}: {str(error).splitlines()[0]}",
            path=path,
            hint="fix the SQL first (`sparkmesh info` shows where)",
        ) from None


def _check_same_query(
    before: list[sqlglot.exp.Expression], after: list[sqlglot.exp.Expression], dialect: str, path: Path
) -> None:
    def canonical(statements: list[sqlglot.exp.Expression]) -> list[str]:
        return [s.sql(dialect=dialect, comments=False, normalize=True) for s in statements]

    if canonical(before) != canonical(after):
        raise ProjectError(
            f"formatting {path.name} would change its query; the file was left as is",
            path=path,
            hint="please report this file: the formatter must never change what a model computes",
        )


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.sparkmesh-format")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
