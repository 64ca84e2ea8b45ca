"""Importing a project's own Python files (signals, materializations) as SQLMesh does: from the project root, with
``import sqlmesh`` resolved to this package, no ``__pycache__`` left in the user's folders, and an error that names
the file."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.sqlmesh_api.importer import project_imports


@contextmanager
def project_code(root: Path) -> Iterator[None]:
    """Inside: project files import as SQLMesh lets them, and no bytecode is written next to them."""
    writes_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        with project_imports(root):
            yield
    finally:
        sys.dont_write_bytecode = writes_bytecode


def python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts) if folder.is_dir() else []


def import_project_file(file: Path, root: Path, what: str) -> ModuleType:
    """``file`` imported by its module name under ``root`` (inside ``project_code``); ``what``: "signal file" ..."""
    relative = file.relative_to(root).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    try:
        return importlib.import_module(".".join(parts))
    except Exception as error:  # the user's file: name it
        line = getattr(error, "lineno", None) if isinstance(error, SyntaxError) else None
        raise ProjectError(f"importing the {what} raised {type(error).__name__}: {error}", path=file, line=line,
                           hint=f"{what}s import from the project root, as in SQLMesh") from error
