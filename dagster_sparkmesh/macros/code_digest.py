"""The code of the Python macros a model calls, as one digest, so that editing a macro re-versions its users.

A macro that reads the interval is expanded only when an interval is rendered: the model's stored query keeps the
call (``@factor()``), so hashing the query alone would miss an edit of the macro's body. A call expanded at load
changes the query only when its output changes; its code is hashed all the same, as SQLMesh does.

What a macro's digest covers: its source (through the AST: comments and layout do not count), and, transitively,
what it uses from its module's globals: functions of the project (another macro, a helper, ``@name`` calls in
its SQL strings) and constants (numbers, strings, and tuples, lists, sets or dicts of them).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import inspect
import re
import textwrap
import threading
import types
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

_PARSE_LOCK = threading.Lock()
_CALL = re.compile(r"@\s*([A-Za-z_]\w*)")
_CONSTANT_TYPES = (str, int, float, bool, bytes, type(None))


def macro_code_digest(text: str, macros: Mapping[str, Callable[..., Any]]) -> str | None:
    """The digest of every project macro ``text`` (a model file) calls; None when it calls none."""
    called = sorted({name.lower() for name in _CALL.findall(text)} & set(macros))
    if not called:
        return None
    seen: set[int] = set()
    parts = [part for name in called for part in _function_parts(name, macros[name], macros, seen)]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def _function_parts(
    label: str, function: Callable[..., Any], macros: Mapping[str, Callable[..., Any]], seen: set[int]
) -> Iterator[str]:
    function = inspect.unwrap(function)
    if id(function) in seen:
        return
    seen.add(id(function))
    source = _normalized_source(function)
    yield f"{label}:{source}"
    for name in sorted({n.lower() for n in _CALL.findall(source)} & set(macros)):
        yield from _function_parts(name, macros[name], macros, seen)
    code = getattr(function, "__code__", None)
    if code is None:
        return
    namespace = getattr(function, "__globals__", {})
    for name in sorted(_global_names(code)):
        if name not in namespace:
            continue
        value = namespace[name]
        if isinstance(value, types.FunctionType) and _same_project(value, function):
            yield from _function_parts(name, value, macros, seen)
        elif _is_constant(value):
            yield f"{name}={value!r}"


def _normalized_source(function: Callable[..., Any]) -> str:
    # Every model calling a macro asks for its source again: reading and re-printing it through the AST for each
    # was a third of a cold load of 1,000 macro models. Keyed weakly by the function object: a macro file loaded
    # again (edited) brings new function objects, so the cache never answers for changed code.
    with contextlib.suppress(KeyError, TypeError):  # not read yet, or an object that takes no weak reference
        return _SOURCES[function]
    source = _read_normalized_source(function)
    with contextlib.suppress(TypeError):  # an object that takes no weak reference: not cached
        _SOURCES[function] = source
    return source


_SOURCES: weakref.WeakKeyDictionary[Callable[..., Any], str] = weakref.WeakKeyDictionary()


def _read_normalized_source(function: Callable[..., Any]) -> str:
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):  # defined where no source can be read: its compiled code stands for it
        code = getattr(function, "__code__", None)
        return code.co_code.hex() + repr(code.co_consts) if code is not None else repr(function)
    try:
        return ast.unparse(parse_python(source))
    except SyntaxError:
        return source


def _global_names(code: types.CodeType) -> set[str]:
    """The global names a function's code (and the functions and comprehensions nested in it) reads."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _global_names(constant)
    return names


def _same_project(helper: types.FunctionType, macro: Callable[..., Any]) -> bool:
    """A helper from the macro's own package (the project), not from a library it imports."""
    module, origin = getattr(helper, "__module__", "") or "", getattr(macro, "__module__", "") or ""
    return module.split(".")[0] == origin.split(".")[0]


def _is_constant(value: object) -> bool:
    if isinstance(value, _CONSTANT_TYPES):
        return True
    if isinstance(value, (tuple, list, set, frozenset)):
        return all(_is_constant(item) for item in value)
    if isinstance(value, dict):
        return all(_is_constant(k) and _is_constant(v) for k, v in value.items())
    return False


def parse_python(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse``, one thread at a time: CPython 3.11 before 3.11.8 shares the AST converter's recursion counter
    between threads, and two projects loaded at once (a Dagster code server, a test beside a run) failed with
    "SystemError: AST constructor recursion depth mismatch"."""
    with _PARSE_LOCK:
        return ast.parse(source, filename=filename)
