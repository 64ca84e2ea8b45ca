"""config.yaml as a Jinja template, rendered before YAML reads it, as SQLMesh does (``sqlmesh/utils/yaml.py``).

SQLMesh renders the whole file with its Jinja environment (extensions ``do`` and ``loopcontrols``, filters
``b64encode``/``b64decode``) and the names ``env_var(name, default=None)``, ``user()`` and ``var(name, default=None)``
(config.yaml is read without variables, so ``var`` always gives its default). Projects use ``{% if %}`` blocks,
filters and string methods in it, so a regular expression on ``{{ env_var() }}`` is not enough.

Jinja keeps every newline outside its tags, so a file without multi-line tags keeps its line numbers; when rendering
changes the number of lines, ``RenderedConfig.shifted`` says so and YAML errors name the line of the rendered text.
"""

from __future__ import annotations

import base64
import getpass
import os
from pathlib import Path
from types import TracebackType

import jinja2

from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.records import Record


class RenderedConfig(Record):
    text: str
    shifted: bool = False
    """True when rendering removed or added lines (a multi-line tag, a value holding newlines): lines of ``text``
    then are not those of the file."""


def _b64decode(value: str | bytes) -> str:
    return base64.b64decode(value.encode("utf-8") if isinstance(value, str) else value).decode("utf-8")


def _b64encode(value: str | bytes) -> str:
    return base64.b64encode(value.encode("utf-8") if isinstance(value, str) else value).decode("utf-8")


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols"])
    environment.filters.update({"b64decode": _b64decode, "b64encode": _b64encode})
    return environment


class _UnsetVariable(jinja2.Undefined):
    """``env_var('NAME')`` of an unset variable without a default. SQLMesh gets None, which is falsy in a test and
    ``| default(...)`` replaces (both work here too: this is an Undefined), but written into the YAML it becomes the
    text ``None``: that is refused here with the variable's name rather than passed on as a wrong setting."""

    def __str__(self) -> str:
        name = self._undefined_name or "?"
        raise ConfigError(f"environment variable {name} is not set", snippet=f"env_var('{name}')",
                          hint=f"set {name} or give a default: env_var('{name}', 'value')")


def _env_var(name: str, default: object = None) -> object:
    value = os.environ.get(name)
    if value is not None:
        return value
    return _UnsetVariable(name=name) if default is None else default


def _var(name: str, default: object = None) -> object:
    return default


def render_config(text: str, path: Path) -> RenderedConfig:
    """``text`` (the content of ``path``) rendered as SQLMesh renders config.yaml; ConfigError with the file and line
    for a Jinja syntax error or a failure while rendering."""
    if "{{" not in text and "{%" not in text and "{#" not in text:
        return RenderedConfig(text=text)
    environment = _environment()
    try:
        template = environment.from_string(text)
    except jinja2.TemplateSyntaxError as error:
        raise ConfigError(f"invalid Jinja: {error.message}", path=path, line=error.lineno,
                          snippet=_line(text, error.lineno),
                          hint="config.yaml is rendered as a Jinja template before it is read as YAML; "
                               "close every {{ }} and {% %}, e.g. {% if ... %}a{% else %}b{% endif %}") from None
    try:
        rendered = template.render(env_var=_env_var, user=getpass.getuser, var=_var)
    except ConfigError as error:
        error.path, error.line = path, _template_line(error.__traceback__)
        raise
    except Exception as error:  # any failure of an expression: Undefined, a method of None, a bad int()
        line = _template_line(error.__traceback__)
        raise ConfigError(f"Jinja rendering failed: {type(error).__name__}: {error}", path=path, line=line,
                          snippet=_line(text, line),
                          hint="check the expression; env_var('NAME', 'default') gives text") from None
    # Jinja drops one trailing newline; the line count is compared without it.
    shifted = rendered.rstrip("\n").count("\n") != text.rstrip("\n").count("\n")
    return RenderedConfig(text=rendered, shifted=shifted)


def _template_line(traceback: TracebackType | None) -> int | None:
    """The line of the template being rendered when ``traceback`` was raised: Jinja rewrites the frames of the
    compiled template to the template's own lines, under the file name ``<template>``."""
    line = None
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == "<template>":
            line = traceback.tb_lineno
        traceback = traceback.tb_next
    return line


def _line(text: str, line: int | None) -> str | None:
    lines = text.splitlines()
    return lines[line - 1].strip() if line is not None and 0 < line <= len(lines) else None
