"""Models that do not load, set aside so that the rest of a project still loads (a code location must not lose
every asset to one syntax error). Only a caller that shows them asks for this: the CLI and the git sensor load
strictly and stop at the first error, and nothing is ever planned from a project with broken models."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import with_default_schema

_DECLARED_NAME = re.compile(r"MODEL\s*\(\s*name\s+[`\"']?([\w.]+)", re.IGNORECASE)
_T = TypeVar("_T")


class BrokenModel(Record):
    path: Path
    name: str | None
    """The name the file declares, when its header can be read at all."""
    error: str
    """The error as the CLI prints it: file, line and column, what is wrong, what to do."""
    cause: str | None = None
    """For a model that only reads a broken one: that model's name."""


def tolerant(load: Callable[[], list[_T]], file: Path, broken: list[BrokenModel] | None) -> list[_T]:
    """``load()`` of one model file; its error is collected in ``broken`` instead of raised (raised without one)."""
    try:
        return load()
    except ProjectError as error:
        if broken is None:
            raise
        broken.append(BrokenModel(path=file, name=declared_name(file), error=str(error)))
        return []


def declared_name(file: Path) -> str | None:
    try:
        found = _DECLARED_NAME.search(file.read_text(errors="replace"))
    except OSError:
        return None
    return with_default_schema(found.group(1).lower()) if found else None


def without_unresolved(
    models: Mapping[str, Model], references: Mapping[str, tuple], externals: Mapping[str, object], broken: list[BrokenModel]
) -> dict[str, Model]:
    """The models whose every reference resolves; the others join ``broken``, naming what they read that is gone
    (in turn, a reader of theirs)."""
    kept = dict(models)
    changed = True
    while changed:
        changed = False
        for name, model in list(kept.items()):
            gone = next((r.name for r in references.get(name, ()) if r.name != name and r.name not in kept
                         and r.name not in externals), None)
            if gone is not None:
                del kept[name]
                changed = True
                reason = f"{model.path}: {name} reads {gone}, which does not load"
                broken.append(BrokenModel(path=model.path, name=name, error=reason, cause=gone))
    return kept
