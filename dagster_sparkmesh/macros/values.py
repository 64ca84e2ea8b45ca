"""Conversions between Python values and sqlglot expressions, at the macro boundary.

Config variables are Python values (int, float, bool, str, lists, dicts) and become SQL literals; what a macro
returns (expression, string, number, list, None) becomes expressions. Typed user macros get their arguments
converted to the Python types they annotate.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import sqlglot
from sqlglot import exp

Returned = exp.Expression | list[exp.Expression] | None

SQL = typing.NewType("SQL", str)
"""A typed macro's parameter annotated ``SQL`` receives the argument's SQL text (SQLMesh's ``sqlmesh.SQL``)."""


class NotSql(TypeError):
    """A macro returned something that has no SQL form."""


def to_expression(value: Any, parse: Callable[[str], exp.Expression]) -> exp.Expression:
    """A macro's scalar result as an expression; strings are SQL (macros in them included), parsed by ``parse``."""
    if isinstance(value, exp.Expression):
        return value
    if isinstance(value, str):
        return parse(value)
    return literal(value)


def literal(value: Any) -> exp.Expression:
    """A Python value as a SQL literal: strings stay strings (config variables are values, not SQL)."""
    if isinstance(value, exp.Expression):
        return value
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float)):
        return exp.Literal.number(value)
    if isinstance(value, str):
        return exp.Literal.string(value)
    if value is None:
        return exp.Null()
    if isinstance(value, (list, tuple)):
        return exp.Array(expressions=[literal(item) for item in value])
    if isinstance(value, dict):
        return exp.Struct(expressions=[exp.PropertyEQ(this=exp.to_identifier(k), expression=literal(v)) for k, v in value.items()])
    raise NotSql(f"{type(value).__name__} value {value!r} has no SQL form")


def returned(value: Any, parse: Callable[[str], exp.Expression]) -> Returned:
    """What a macro returned, as one expression, a list of them, or None (nothing to put in the query)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        items = [to_expression(item, parse) for item in value if item is not None]
        return items
    if isinstance(value, (exp.Expression, str, int, float, bool)):
        return to_expression(value, parse)
    raise NotSql(f"{type(value).__name__} value {value!r} has no SQL form")


def python_value(expression: exp.Expression) -> Any:
    """A literal expression as the Python value it stands for (used for typed macros and conditions)."""
    if isinstance(expression, exp.Boolean):
        return expression.this
    if isinstance(expression, exp.Null):
        return None
    if isinstance(expression, exp.Literal):
        return expression.this if expression.is_string else _number(expression.this)
    if isinstance(expression, (exp.Array, exp.Tuple)):
        return [python_value(item) for item in expression.expressions]
    if isinstance(expression, (exp.Column, exp.Identifier, exp.Var)):
        return expression.name
    return expression.sql()


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)


def typed_arguments(
    function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], dialect: str = "spark"
) -> tuple[list[Any], dict[str, Any]]:
    """Convert arguments to the annotations of a typed macro (``int``, ``str``, ``list[int]``, ``exp.Column`` ...)."""
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # unresolvable annotations: pass expressions as SQLMesh does for untyped macros
        return args, kwargs
    if not hints:
        return args, kwargs
    parameters = list(inspect.signature(function).parameters.values())[1:]  # the first is the evaluator
    converted = []
    for index, value in enumerate(args):
        parameter = parameters[index] if index < len(parameters) else None
        if parameter is not None and parameter.kind == parameter.VAR_POSITIONAL:
            converted.extend(_coerce(item, hints.get(parameter.name), dialect) for item in args[index:])
            break
        converted.append(_coerce(value, hints.get(parameter.name) if parameter else None, dialect))
    return converted, {name: _coerce(value, hints.get(name), dialect) for name, value in kwargs.items()}


def _coerce(value: Any, annotation: Any, dialect: str) -> Any:
    if annotation is None or annotation is Any or not isinstance(value, exp.Expression):
        return value
    if annotation is SQL:  # the text as the model's dialect writes it: the macro may build SQL from it
        return value.sql(dialect=dialect)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        for option in typing.get_args(annotation):
            if option is type(None):
                continue
            try:
                return _coerce(value, option, dialect)
            except (TypeError, ValueError):
                continue
        return value
    if origin in (list, tuple):
        (item_type, *_) = typing.get_args(annotation) or (Any,)
        items = value.expressions if isinstance(value, (exp.Array, exp.Tuple)) else [value]
        return origin(_coerce(item, item_type, dialect) for item in items)
    if isinstance(annotation, type) and issubclass(annotation, exp.Expression):
        return _as_expression_type(value, annotation, dialect)
    if annotation in (int, float, str, bool):
        return _as_scalar(value, annotation)
    return value


def _as_expression_type(value: exp.Expression, annotation: type[exp.Expression], dialect: str) -> exp.Expression:
    if isinstance(value, annotation):
        return value
    parsed = _parsed_string(value, dialect)
    if isinstance(parsed, annotation):  # a string literal holding SQL of the annotated kind ('SELECT a, b')
        return parsed
    if annotation is exp.Identifier and isinstance(value, (exp.Column, exp.Literal)):
        return exp.to_identifier(value.name)
    if annotation is exp.Column and isinstance(value, (exp.Identifier, exp.Literal)):
        return exp.column(value.name)
    if annotation is exp.Table and isinstance(value, (exp.Column, exp.Literal, exp.Identifier)):
        return exp.to_table(value.sql() if not isinstance(value, exp.Literal) else value.name)
    raise TypeError(f"expected {annotation.__name__}, got {value.sql()}")


def _parsed_string(value: exp.Expression, dialect: str) -> exp.Expression | None:
    if not (isinstance(value, exp.Literal) and value.is_string):
        return None
    try:
        return sqlglot.parse_one(value.this, dialect=dialect)
    except sqlglot.errors.SqlglotError:
        return None


def _as_scalar(value: exp.Expression, annotation: type) -> Any:
    raw = python_value(value)
    if annotation is bool:
        if isinstance(raw, str):
            return raw.lower() in ("true", "1")
        return bool(raw)
    return annotation(raw)
