"""User macros: ``@macro()`` functions in a project's ``macros/**/*.py``.

The decorator only tags the function (no process-wide registry: two projects loaded in one process never see each
other's macros); ``load_user_macros`` imports the project's macro files, with the project root importable and
``sqlmesh`` resolving to our API, and collects the tagged functions.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from dagster_sparkmesh.errors import ProjectError

MACRO_ATTRIBUTE = "__sparkmesh_macro__"


def macro(name: str | None = None, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@macro()`` or ``@macro("other_name")``: make a function a macro, called as ``@name(...)`` in SQL."""
    if callable(name):  # written without parentheses: ``@macro``
        return macro()(name)  # type: ignore[return-value]

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        setattr(function, MACRO_ATTRIBUTE, (name or function.__name__).lower())
        return function

    return decorate


def collect_macros(modules: Iterable[ModuleType]) -> dict[str, Callable[..., Any]]:
    """Macro name → function, for the functions the given modules define with ``@macro``."""
    found: dict[str, Callable[..., Any]] = {}
    for module in modules:
        for value in vars(module).values():
            name = getattr(value, MACRO_ATTRIBUTE, None)
            if callable(value) and isinstance(name, str):
                found[name] = value
    return found


@dataclass(frozen=True)
class UserMacros:
    """A project's Python macros, and a digest of their files (part of the parse cache's key)."""

    functions: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    digest: str = ""
    jinja_source: str = ""
    """The Jinja macros of ``macros/**/*.sql``, one template text."""


def macro_files(project_root: Path) -> list[Path]:
    folder = project_root / "macros"
    return sorted(path for path in folder.rglob("*.py") if "__pycache__" not in path.parts) if folder.is_dir() else []


def jinja_macro_files(project_root: Path) -> list[Path]:
    folder = project_root / "macros"
    return sorted(folder.rglob("*.sql")) if folder.is_dir() else []


def load_user_macros(project_root: Path) -> UserMacros:
    files = macro_files(project_root)
    jinja_files = jinja_macro_files(project_root)
    if not files and not jinja_files:
        return UserMacros()
    digest = hashlib.sha256()
    for file in [*files, *jinja_files]:
        digest.update(str(file.relative_to(project_root)).encode() + b"\0" + file.read_bytes() + b"\0")
    jinja_source = "\n".join(file.read_text(encoding="utf-8") for file in jinja_files)
    if not files:
        return UserMacros(digest=digest.hexdigest(), jinja_source=jinja_source)
    from dagster_sparkmesh.sqlmesh_api.importer import project_imports

    modules = []
    # A module of the host process may already be called ``macros`` (a test package, another project's): set it
    # aside so that ``macros.x`` means this project's folder, and put it back after.
    # A snapshot: another thread (Spark's, a run's) may import while this one reads the module table.
    loaded = list(sys.modules.items())
    hidden = {name: module for name, module in loaded if name == "macros" or name.startswith("macros.")}
    for name in hidden:
        del sys.modules[name]
    try:
        with project_imports(project_root):
            for file in files:
                modules.append(_import(file, project_root))
    finally:
        sys.modules.update(hidden)
    return UserMacros(functions=collect_macros(modules), digest=digest.hexdigest(), jinja_source=jinja_source)


def _import(file: Path, project_root: Path) -> ModuleType:
    relative = file.relative_to(project_root).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    try:
        return importlib.import_module(".".join(parts))
    except SyntaxError as error:
        raise ProjectError(f"syntax error in macro file: {error.msg}", path=file, line=error.lineno, col=error.offset,
                           snippet=error.text, hint="fix the Python syntax") from None
    except Exception as error:  # the file's own code failed: show where, in the user's file
        line = next((frame.lineno for frame in reversed(traceback.extract_tb(error.__traceback__))
                     if Path(frame.filename).resolve() == file.resolve()), None)
        raise ProjectError(f"importing the macro file failed: {type(error).__name__}: {error}", path=file, line=line,
                           hint="fix the error in the macro file (the project root is importable: from macros.x import y)") from None
