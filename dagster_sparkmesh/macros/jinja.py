"""Jinja in model files: ``JINJA_QUERY_BEGIN; ... JINJA_END;`` / ``JINJA_STATEMENT_BEGIN; ... JINJA_END;`` blocks
(or bare ``{{ }}`` / ``{% %}`` text), rendered when the project loads, with the project's ``macros/*.sql`` Jinja
macros and SQLMesh's context: ``var()``, ``gateway``, and the interval variables.

The interval is not known while loading, so ``start_ds`` and friends render as the SQLMesh macro ``@start_ds``
(a quoted ``'{{ start_ds }}'`` included: ``@start_ds`` is itself a string literal), which rendering fills in for
each interval. A template that *branches* on the interval (``{% if start_ds > ... %}``) cannot work this way and
sees the placeholder text.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.macros.expansion import RENDER_TIME
from dagster_sparkmesh.macros import sql_text

_BLOCK = re.compile(r"\bJINJA_(?:QUERY|STATEMENT)_BEGIN\s*;(?P<body>.*?)\bJINJA_END\s*;?", re.IGNORECASE | re.DOTALL)
_PLACEHOLDER = re.compile(r"'?__smj_(\w+?)__'?")


def has_jinja(text: str) -> bool:
    if _BLOCK.search(text):
        return True
    if "{" not in text:
        return False
    # Inside string literals too, as SQLMesh renders the whole query: ``CAST('{{ start_ds }}' AS DATE)``.
    return any(token.kind == "jinja" or (token.kind == "string" and ("{{" in token.text or "{%" in token.text))
               for token in sql_text.tokens(text))


def render(text: str, *, path: Path, variables: Mapping[str, Any], macros_source: str = "", gateway: str | None = None) -> str:
    """``text`` with its Jinja rendered; blocks are replaced in place, everything outside them stays as written."""
    if _BLOCK.search(text):
        return _BLOCK.sub(lambda match: _render_one(match.group("body"), text, match.start("body"), path, variables,
                                                    macros_source, gateway) + ";", text)
    return _render_one(text, text, 0, path, variables, macros_source, gateway)


def _render_one(template: str, whole: str, offset: int, path: Path, variables: Mapping[str, Any],
                macros_source: str, gateway: str | None) -> str:
    import jinja2

    environment = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, extensions=["jinja2.ext.do"])
    first_line = whole.count("\n", 0, offset) + 1
    try:
        macros = environment.from_string(macros_source).module if macros_source else None
        compiled = environment.from_string(template)
        rendered = compiled.render(**_context(variables, macros, gateway))
    except jinja2.TemplateSyntaxError as error:
        line = (error.lineno or 1) + first_line - 1
        raise ProjectError(f"Jinja syntax error: {error.message}", path=path, line=line,
                           snippet=sql_text.line_at(whole, _offset_of_line(whole, line)), hint="fix the template") from None
    except jinja2.UndefinedError as error:
        # Jinja does not say where: the first use of the undefined name in the template is the place to look.
        name = re.search(r"'(\w+)' is (?:undefined|not defined)", error.message or "")
        found = whole.find(name.group(1), offset) if name else -1
        at = found if found >= 0 else offset
        raise ProjectError(f"Jinja: {error.message}", path=path, line=sql_text.line_col(whole, at)[0],
                           snippet=sql_text.line_at(whole, at),
                           hint="define it with {% set %}, under 'variables' (read with var('name')), or in macros/*.sql") from None
    except Exception as error:  # the template's own expression failed ({{ 1/0 }}): where, and what
        line = _template_line(error) + first_line - 1
        raise ProjectError(f"Jinja: rendering raised {type(error).__name__}: {error}", path=path, line=line,
                           snippet=sql_text.line_at(whole, _offset_of_line(whole, line)),
                           hint="fix the expression on that line of the template") from None
    # Interval placeholders become SQLMesh macros, quoted or not: ``'@start_ds'`` would be a plain string.
    return _PLACEHOLDER.sub(lambda match: "@" + match.group(1), rendered)


def _template_line(error: BaseException) -> int:
    """The template's line in a rendering error's traceback (Jinja maps its frames to ``<template>`` lines)."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == "<template>"]
    return frames[-1].lineno or 1 if frames else 1


def _unset_variable(jinja2: Any) -> type:
    """An unset variable: false in a test, an error where it is written into the SQL."""

    class UnsetVariable(jinja2.StrictUndefined):
        def __bool__(self) -> bool:
            return False

    return UnsetVariable


def _context(variables: Mapping[str, Any], macros: Any, gateway: str | None) -> dict[str, Any]:
    import jinja2

    lowered = {key.lower(): value for key, value in variables.items()}
    _unset = object()

    def var(name: str, default: Any = _unset) -> Any:
        if default is _unset and str(name).lower() not in lowered:
            # Tested ({% if var('x') %}, `is defined`, `| default`) it is simply unset; written into the SQL
            # it is an error at load, not the text "None" that Spark would read as a column.
            return _unset_variable(jinja2)(hint=f"variable '{name}' is not defined", name=str(name))
        return lowered.get(str(name).lower(), None if default is _unset else default)

    context: dict[str, Any] = {name: f"__smj_{name}__" for name in RENDER_TIME}
    context.update(var=var, gateway=gateway or "")
    if macros is not None:
        context.update({name: getattr(macros, name) for name in dir(macros) if not name.startswith("_")})
    return context


def _offset_of_line(text: str, line: int) -> int:
    offset = 0
    for _ in range(line - 1):
        found = text.find("\n", offset)
        if found < 0:
            return offset
        offset = found + 1
    return offset
