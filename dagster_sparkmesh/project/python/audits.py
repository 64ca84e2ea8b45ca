"""Audits attached to a Python model: ``audits=["not_null(columns := (id))", ("accepted_range", {...})]``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlglot import exp
from sqlglot.errors import ParseError

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.records import AuditCall
from dagster_sparkmesh.project.python.options import Where
from dagster_sparkmesh.macros.parse_errors import parse_error_description


def audits(entries: object, where: Where) -> tuple[AuditCall, ...]:
    if entries is None:
        return ()
    if not isinstance(entries, (list, tuple)):
        raise where.error("audits", "expected a list of audits", entries, 'write audits=["not_null(columns := (id))"]')
    return tuple(_audit_call(entry, where.path, where.line) for entry in entries)


def _audit_call(entry: Any, path: Path, line: int) -> AuditCall:
    if isinstance(entry, str):
        return parse_audit_call(entry, path=path, line=line)
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], dict):
        return AuditCall(name=entry[0].lower(), args=tuple((str(k).lower(), _sql_value(v)) for k, v in entry[1].items()))
    raise ProjectError(
        f"invalid audit {entry!r}",
        path=path,
        line=line,
        hint="write audits as \"not_null(columns := (id))\" or (\"not_null\", {\"columns\": [exp.column(\"id\")]})",
    )


def parse_audit_call(text: str, *, path: Path, line: int | None = None) -> AuditCall:
    """``name`` or ``name(arg := value, ...)`` (SQL syntax, as in a MODEL block) → AuditCall."""
    try:
        call = exp.maybe_parse(text.strip(), dialect="spark")
    except ParseError as error:
        raise ProjectError(f"cannot parse audit {text!r}: {parse_error_description(error)}", path=path, line=line, snippet=text) from error
    if isinstance(call, exp.Column) and not call.table:
        return AuditCall(name=call.name.lower())
    if not isinstance(call, exp.Func):
        raise ProjectError(f"audit {text!r} is not a call", path=path, line=line, snippet=text, hint="write name(arg := value)")
    args = []
    for argument in _call_arguments(call):
        if not isinstance(argument, (exp.PropertyEQ, exp.EQ)) or not isinstance(argument.this, (exp.Column, exp.Identifier)):
            raise ProjectError(
                f"audit arguments must be named: {text!r}", path=path, line=line, snippet=text, hint="write arg := value"
            )
        args.append((argument.this.name.lower(), argument.expression.sql(dialect="spark")))
    name = call.name if isinstance(call, exp.Anonymous) else call.sql_name()
    return AuditCall(name=name.lower(), args=tuple(args))


def _call_arguments(call: exp.Func) -> list[exp.Expression]:
    if isinstance(call, exp.Anonymous):
        return list(call.expressions)
    # An audit named like a Spark function (e.g. ``count``) parses as that function: flatten its arguments.
    values = [value if isinstance(value, list) else [value] for value in call.args.values()]
    return [value for group in values for value in group if isinstance(value, exp.Expression)]


def _sql_value(value: Any) -> str:
    """SQLMesh's conversion: a sqlglot expression is SQL (``exp.column("id")``), any other value a literal
    (a string is a string literal, a list a tuple of literals)."""
    if isinstance(value, exp.Expression):
        return value.sql(dialect="spark")
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_sql_value(item) for item in value) + ")"
    return exp.convert(value).sql(dialect="spark")
