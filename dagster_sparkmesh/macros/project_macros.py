"""A project's user macros, found from a model file's path, for rendering a call that waited for an interval.

Rendering is given models, not the project; a model's file tells where its project's ``macros/`` folder is.
The result is cached per project root and the files' digest, so an edited macro file is read again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dagster_sparkmesh.macros.registry import load_user_macros, macro_files

_CACHE: dict[tuple[Path, tuple[tuple[str, int, int], ...]], dict[str, Callable[..., Any]]] = {}


def project_root(file: Path) -> Path:
    """The project folder of a model or audit file: the parent of its ``models/`` or ``audits/`` folder."""
    for parent in file.parents:
        if parent.name in ("models", "audits"):
            return parent.parent
    return file.parent


def user_macros_for(model_path: Path | None) -> dict[str, Callable[..., Any]]:
    if model_path is None:
        return {}
    root = project_root(Path(model_path))
    files = macro_files(root)
    key = (root, tuple((str(file), file.stat().st_mtime_ns, file.stat().st_size) for file in files))
    if key not in _CACHE:
        _CACHE[key] = dict(load_user_macros(root).functions)
    return _CACHE[key]
