"""Macro variables in model SQL: which are supported, and how they survive parsing.

Supported: the time macros (``@start_ds`` ...), ``@this_model`` and config ``variables`` (``@name`` or
``@VAR('name'[, default])``). Everything else SQLMesh's macro system offers (user macros, ``@DEF``, ``@EACH``,
``@IF``, ``@SQL``, Jinja) is refused with a ProjectError, because guessing its meaning could produce a wrong query.

Before parsing, each supported macro is replaced by a sentinel identifier (dialects disagree on ``@``: DuckDB
reads ``@x`` as ``ABS(x)``); after parsing, sentinels become ``@name`` placeholders again (time macros,
``@this_model``: rendered per interval later) or SQL literals (config variables: their value is part of what the
query computes, so it must be part of the canonical text and hence of the fingerprint).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from sqlglot import exp

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project import sql_text

TIME_MACROS = frozenset(
    f"{prefix}_{suffix}"
    for prefix in ("start", "end")
    for suffix in ("ds", "date", "ts", "dt", "epoch", "millis")
) | frozenset(f"execution_{suffix}" for suffix in ("ds", "ts", "dt", "date", "epoch"))
BUILTIN_MACROS = TIME_MACROS | {"this_model"}

SENTINEL_PREFIX = "__sparkmesh_macro__"
_JINJA_QUERY = re.compile(r"\bJINJA_(?:QUERY|STATEMENT)_BEGIN\b", re.IGNORECASE)
_UNSUPPORTED_HINT = "macros other than the time macros, @this_model and config variables are not supported"

Variables = Mapping[str, "str | int | float | bool"]


def replace_macros(text: str, *, path: Path, variables: Variables) -> str:
    """Check every macro in ``text`` and return it with supported ones replaced by sentinel identifiers."""
    jinja = _JINJA_QUERY.search(text)
    if jinja:
        _refuse(text, jinja.start(), jinja.group(), path, "Jinja blocks are not supported")
    if "@" not in text and "{" not in text:
        return text
    parts: list[str] = []
    last = 0
    skip_until = 0
    for token in sql_text.tokens(text):
        if token.start < skip_until:
            continue
        if token.kind == "jinja":
            _refuse(text, token.start, token.text, path, "Jinja templating is not supported; write plain SQL")
        if token.kind != "macro":
            continue
        replacement, end = _replacement(text, token, path, variables)
        parts.append(text[last : token.start])
        parts.append(replacement)
        last = skip_until = end
    parts.append(text[last:])
    return "".join(parts)


def _replacement(text: str, token: sql_text.Token, path: Path, variables: Variables) -> tuple[str, int]:
    raw = token.text.rstrip("( \t")
    if raw.startswith("@{") or raw in ("@'", '@"'):
        _refuse(text, token.start, raw, path, _UNSUPPORTED_HINT)
    name = raw[1:].lower()
    if token.text.endswith("("):
        if name != "var":
            _refuse(text, token.start, f"{raw}(...)", path, _UNSUPPORTED_HINT)
        return _var_call(text, token, path, variables)
    if name in BUILTIN_MACROS or name in variables:
        return SENTINEL_PREFIX + name, token.end
    line, col = sql_text.line_col(text, token.start)
    raise ProjectError(
        f"unknown macro variable {raw}",
        path=path,
        line=line,
        col=col,
        snippet=sql_text.line_at(text, token.start),
        hint=f"define {name!r} under 'variables' in config.yaml, or use one of: {', '.join(sorted(BUILTIN_MACROS))}",
    )


def _var_call(text: str, token: sql_text.Token, path: Path, variables: Variables) -> tuple[str, int]:
    """``@VAR('name')`` or ``@VAR('name', default)``: the variable, else the default text, else an error."""
    open_offset = token.end - 1
    close = sql_text.matching_close(text, open_offset)
    args = sql_text.split_top_level(text, open_offset + 1, close) if close is not None else []
    if close is None or not 1 <= len(args) <= 2 or args[0].text[:1] not in ("'", '"'):
        _refuse(text, token.start, "@VAR", path, "write @VAR('name') or @VAR('name', default)")
    name = args[0].text[1:-1].lower()
    if name in variables:
        return SENTINEL_PREFIX + name, close + 1
    if len(args) == 2:
        return args[1].text, close + 1
    line, col = sql_text.line_col(text, token.start)
    raise ProjectError(
        f"unknown variable {name!r} in @VAR",
        path=path,
        line=line,
        col=col,
        snippet=sql_text.line_at(text, token.start),
        hint=f"define {name!r} under 'variables' in config.yaml or give a default: @VAR('{name}', value)",
    )


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


def restore_macros(expression: exp.Expression, *, path: Path, variables: Variables) -> None:
    """Turn sentinels back into ``@name`` placeholders or variable literals, in place."""
    for node in list(expression.find_all(exp.Identifier, exp.Var)):
        if node.name.startswith(SENTINEL_PREFIX):
            _restore(node, node.name[len(SENTINEL_PREFIX) :], path, variables)


def _restore(identifier: exp.Identifier | exp.Var, name: str, path: Path, variables: Variables) -> None:
    # Some statements (``SET k = @start_ds``) parse a bare word as a Var rather than a column.
    if isinstance(identifier, exp.Var):
        identifier.replace(exp.Var(this=f"@{name}") if name in BUILTIN_MACROS else variable_literal(variables[name]))
        return
    parent = identifier.parent
    column = parent if isinstance(parent, exp.Column) and parent.this is identifier and not parent.table else None
    if name in BUILTIN_MACROS:
        placeholder = exp.Var(this=f"@{name}")
        if column is not None:
            column.replace(placeholder)
        else:
            identifier.replace(placeholder)
        return
    if column is None:
        raise ProjectError(
            f"variable @{name} is used as a name, not as a value",
            path=path,
            line=identifier.meta.get("line"),
            hint="config variables can only stand for values (literals) in a model query",
        )
    column.replace(variable_literal(variables[name]))


def variable_literal(value: str | int | float | bool) -> exp.Expression:
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float)):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))
