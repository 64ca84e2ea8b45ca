"""What the evaluator does to single nodes: recognise sentinels, build placeholders, bind lambda parameters,
and point errors at the macro in the source text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sqlglot import exp

from dagster_sparkmesh.macros import syntax, values


def as_array(value: Any) -> Any:
    return exp.Array(expressions=value) if isinstance(value, list) else value


_PREFIXES = (syntax.CALL, syntax.VARIABLE, syntax.CLAUSE)
MACRO_NODE_TYPES = (exp.Anonymous, exp.Identifier, exp.Var)
"""The only node types ``is_macro`` can accept."""


def is_macro(node: exp.Expression) -> bool:
    """A node the evaluator acts on: a sentinel call, variable, clause marker or interpolated name."""
    if isinstance(node, exp.Anonymous):
        name = node.this if isinstance(node.this, str) else ""
    elif isinstance(node, (exp.Identifier, exp.Var)):
        name = node.name
    else:
        return False
    lowered = name.lower()
    return lowered.startswith(_PREFIXES) or "__smi_" in lowered or quoted_variable(node) is not None


_QUOTED_VARIABLE = re.compile(r"@(\w+)")


def quoted_variable(node: exp.Expression) -> str | None:
    """``@db`` written as a quoted identifier (`` `@db`.t ``, as SQLMesh users write it): the variable's name."""
    if not isinstance(node, exp.Identifier) or not node.args.get("quoted"):
        return None
    match = _QUOTED_VARIABLE.fullmatch(node.name)
    return match.group(1).lower() if match else None


class _Positions(dict):
    """A parsed node's positions (``line``, ``col``, ``start``, ``end``: ints). sqlglot copies a node's meta dict
    with ``copy.deepcopy``, key by key, which is most of what copying a lambda body or an argument costs; a dict
    of ints needs only a flat copy (each copy still owns its dict: sqlglot's simplifier writes into meta)."""

    __slots__ = ()

    def __deepcopy__(self, memo: Any) -> _Positions:
        return _Positions(self)


def cheap_to_copy(node: exp.Expression) -> None:
    """Make copies of ``node`` copy its positions flat (see ``_Positions``); the evaluator copies parsed nodes
    once per lambda application and variable use."""
    meta = node._meta  # the property would allocate an empty dict for every node without one
    if type(meta) is dict and all(type(value) is int for value in meta.values()):
        node._meta = _Positions(meta)


def variable_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Column) and not node.args.get("table") and isinstance(node.this, exp.Identifier):
        return syntax.name_of(node.this.name, syntax.VARIABLE)
    if isinstance(node, exp.Table) and not node.args.get("db") and isinstance(node.this, exp.Identifier):
        return syntax.name_of(node.this.name, syntax.VARIABLE)
    if isinstance(node, (exp.Identifier, exp.Var)):
        return syntax.name_of(node.name, syntax.VARIABLE)
    return None


def placeholder(node: exp.Expression, name: str) -> exp.Expression:
    """A deferred variable, printed ``@name`` in the canonical query and expanded again at render time."""
    placeholder = exp.Var(this=f"@{name}")
    if isinstance(node, exp.Table):
        node.set("this", placeholder)
        return node
    return placeholder


def deferred_call(node: exp.Anonymous, args: list[Any], kwargs: dict[str, Any]) -> exp.Expression:
    name = syntax.name_of(node.this, syntax.CALL) or ""
    arguments = [as_array(arg) for arg in args]
    arguments += [exp.PropertyEQ(this=exp.to_identifier(k), expression=as_array(v)) for k, v in kwargs.items()]
    return exp.Anonymous(this=f"@{name.upper()}", expressions=arguments)


def is_deferred(value: Any) -> bool:
    if isinstance(value, list):
        return any(is_deferred(item) for item in value)
    if not isinstance(value, exp.Expression):
        return False
    for node in value.walk():
        if isinstance(node, exp.Var) and node.name.startswith("@"):
            return True
        if isinstance(node, exp.Anonymous) and isinstance(node.this, str) and node.this.startswith("@"):
            return True
        if isinstance(node, exp.Identifier) and syntax.INTERPOLATION.search(node.name):
            return True
    return False


def bound(node: exp.Expression, bound: Mapping[str, Any]) -> exp.Expression:
    """Lambda parameters written bare (``x -> x + 1``) are replaced by the argument. sqlglot's parser already
    turned them into bare identifiers; in a name position (``AS x``) the argument's text becomes the name."""
    if isinstance(node, exp.Column) and not node.args.get("table") and node.name.lower() in bound:
        return argument_copy(bound[node.name.lower()])
    if isinstance(node, exp.Identifier) and node.name.lower() in bound:
        parent = node.parent
        if isinstance(parent, exp.Column) and parent.args.get("table") is not None:
            return node
        if isinstance(parent, (exp.Alias, exp.TableAlias)) or (isinstance(parent, exp.Column) and parent.this is node):
            return exp.to_identifier(text_of(bound[node.name.lower()]))
        return argument_copy(bound[node.name.lower()])
    return node


def argument_copy(value: Any) -> exp.Expression:
    return value.copy() if isinstance(value, exp.Expression) else values.literal(value)


def as_table(value: exp.Expression | Any, node: exp.Table) -> exp.Expression:
    table = value.copy() if isinstance(value, exp.Table) else exp.to_table(text_of(value))
    if node.args.get("alias") is not None:
        table.set("alias", node.args["alias"])
    return table


def text_of(value: Any) -> str:
    """A value as text inside an identifier: a string's content, a column's name, otherwise its SQL."""
    if isinstance(value, exp.Literal):
        return str(value.this)
    if isinstance(value, (exp.Identifier, exp.Var)) or (isinstance(value, exp.Column) and not value.table):
        return value.name
    if isinstance(value, exp.Expression):
        return value.sql()
    return str(value)


def as_list(result: values.Returned) -> list[exp.Expression]:
    if result is None:
        return []
    return result if isinstance(result, list) else [result]


def join_list(items: list[exp.Expression], original: exp.Expression) -> exp.Expression | None:
    """A list where one expression belongs (``WHERE @EACH(...)``): one item, or a tuple of them."""
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    return exp.Tuple(expressions=items)


def line_of(node: exp.Expression) -> int | None:
    for child in node.walk():
        line = child.meta.get("line") if hasattr(child, "meta") else None
        if line:
            return line
    return None


def col_of(node: exp.Expression) -> int | None:
    for child in node.walk():
        col = child.meta.get("col") if hasattr(child, "meta") else None
        if col:
            return col
    return None


def locate(text: str, line: int, col: int | None, macro: str | None) -> tuple[int, int | None, str]:
    """The line (and column) of ``@macro`` at or before ``line`` (arguments may sit on later lines than the call)."""
    lines = text.splitlines()
    if macro:
        needle = "@" + macro.lower()
        for number in range(min(line, len(lines)), max(0, line - 20), -1):
            found = lines[number - 1].lower().rfind(needle)
            if found >= 0:
                return number, found + 1, lines[number - 1]
    return line, col, lines[line - 1] if 0 < line <= len(lines) else ""


def readable(node: exp.Expression) -> str:
    """The node's SQL with sentinels shown as the macros the user wrote."""
    text = node.sql(dialect="spark")
    text = text.replace(syntax.CALL.upper(), "@").replace(syntax.CALL, "@").replace(syntax.VARIABLE, "@")
    return syntax.INTERPOLATION.sub(lambda m: "@{" + m.group(1) + "}", text)
