"""Which tables a Python model reads: the names it passes to ``context.resolve_table(...)``/``context.table(...)``.

SQLMesh infers a Python model's parents the same way, and a declared ``depends_on`` replaces the inference
(its documented precedence). A name given as a literal, or as an expression over the module's globals (a
constant, an f-string of constants), is read from the function's source without running it. A call whose name
cannot be worked out is an error unless ``depends_on`` is declared: an empty set would make the DAG silently wrong.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.externals import normalize_table_name

_TABLE_METHODS = frozenset({"resolve_table", "table"})


@dataclass(frozen=True)
class TableCall:
    line: int
    text: str
    """The call as written (for messages): ``context.table(name)``."""
    name: str | None
    """The table name, when it could be worked out."""


def model_dependencies(
    function: Callable[..., Any], module: ModuleType, tree: ast.Module, declared: object, path: Path, line: int,
    own_name: str | None = None,
) -> frozenset[str]:
    """``depends_on`` when declared, else the tables the function's body resolves through its context.

    The model's own name is never a parent: a model may read its previous rows (SQLMesh's self-referencing models).
    """
    return _dependencies(function, module, tree, declared, path, line) - {own_name}


def _dependencies(
    function: Callable[..., Any], module: ModuleType, tree: ast.Module, declared: object, path: Path, line: int
) -> frozenset[str]:
    if declared is not None:
        return frozenset(normalize_table_name(name, path=path, line=line) for name in _declared_names(declared, path, line))
    calls = table_calls(function, module, tree)
    unknown = [call for call in calls if call.name is None]
    if unknown:
        raise ProjectError(
            f"cannot tell which table {unknown[0].text} reads without running the model",
            path=path,
            line=unknown[0].line,
            snippet=unknown[0].text,
            hint="pass the table name as a string literal, or declare the parents: @model(..., depends_on=[\"db.table\"])",
        )
    return frozenset(normalize_table_name(call.name, path=path, line=call.line) for call in calls if call.name)


def _declared_names(declared: object, path: Path, line: int) -> list[str]:
    if isinstance(declared, (list, tuple, set, frozenset)) and all(isinstance(name, str) for name in declared):
        return sorted(declared)
    raise ProjectError(
        f"@model depends_on must be a list of table names, not {type(declared).__name__}",
        path=path,
        line=line,
        snippet=f"depends_on={declared!r}"[:200],
        hint='write depends_on=["db.parent"]',
    )


def table_calls(function: Callable[..., Any], module: ModuleType, tree: ast.Module) -> list[TableCall]:
    """The table calls in the function's body, then those of the module's functions it calls (helpers, at any
    depth), as SQLMesh finds a Python model's parents through the functions of its environment."""
    definition = _definition(function, tree)
    if definition is None:
        return []
    calls = _calls_in(definition)(module)
    calls += [call for helper in _helpers(definition, tree) for call in _calls_in(helper)(module) if call.name]
    return sorted(calls, key=lambda call: call.line)


def _calls_in(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> Callable[[ModuleType], list[TableCall]]:
    context_name = definition.args.args[0].arg if definition.args.args else "context"

    def evaluate(module: ModuleType) -> list[TableCall]:
        calls = []
        for node in ast.walk(definition):
            argument = _table_argument(node, context_name)
            if argument is not None:
                calls.append(TableCall(line=node.lineno, text=ast.unparse(node), name=_evaluate(argument, module)))
        return calls

    return evaluate


def _helpers(definition: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module) -> list[ast.FunctionDef]:
    """The module-level functions the definition calls by name, and those they call (each once). A helper's table
    call whose name is a parameter adds nothing and is no error: the model's own calls decide that."""
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found: dict[str, ast.FunctionDef] = {}
    pending = [definition]
    while pending:
        for node in ast.walk(pending.pop()):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                helper = functions.get(node.func.id)
                if helper is not None and helper is not definition and helper.name not in found:
                    found[helper.name] = helper
                    pending.append(helper)
    return list(found.values())


def _definition(function: Callable[..., Any], tree: ast.Module) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    line = function.__code__.co_firstlineno
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function.__name__:
            # co_firstlineno is the first decorator's line; match on it or on the def line.
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            if line in (first, node.lineno):
                return node
    return None


def _table_argument(node: ast.AST, context_name: str) -> ast.expr | None:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    receiver = node.func.value
    if node.func.attr not in _TABLE_METHODS or not (isinstance(receiver, ast.Name) and receiver.id == context_name):
        return None
    if node.args:
        return node.args[0]
    keyword = next((k.value for k in node.keywords if k.arg in ("model_name", "name")), None)
    return keyword


def _evaluate(argument: ast.expr, module: ModuleType) -> str | None:
    if isinstance(argument, ast.Constant):
        return argument.value if isinstance(argument.value, str) else None
    if any(isinstance(node, ast.Call) for node in ast.walk(argument)):
        return None  # never run the user's functions to find a name
    try:
        value = eval(compile(ast.Expression(argument), "<table name>", "eval"), dict(vars(module)))  # noqa: S307
    except Exception:  # a name bound only at run time (a parameter, a loop variable)
        return None
    return value if isinstance(value, str) else None
