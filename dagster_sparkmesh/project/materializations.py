"""Custom materialization classes: where a project's ``CUSTOM`` models find the class their kind names.

As in SQLMesh, a class comes from a ``.py`` file of the project's ``materializations/`` folder or from an installed
package's ``sqlmesh.materializations`` entry point; its ``NAME`` (else its class name) names it, case-insensitively.
Both are imported inside ``project_imports``, so ``from sqlmesh import CustomMaterialization`` is this package's
(``sqlmesh_api.materializations``). The classes are collected from the modules imported for this project, not from
every subclass the process has seen: another project loaded before may define the same name.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from dagster_sparkmesh.macros.code_digest import parse_python
from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.kinds import CustomKind
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.project.broken import BrokenModel
from dagster_sparkmesh.project.code_files import import_project_file, project_code, python_files
from dagster_sparkmesh.sqlmesh_api.kinds import CustomKind as KindSpecOfCustom
from dagster_sparkmesh.sqlmesh_api.materializations import CustomMaterialization

MATERIALIZATIONS_FOLDER = "materializations"
ENTRY_POINT_GROUP = "sqlmesh.materializations"


@dataclass(frozen=True)
class Materialization:
    name: str
    implementation: type[CustomMaterialization]
    kind_type: type[KindSpecOfCustom]
    """What ``model.kind`` is for this class: the kind named in ``CustomMaterialization[Kind]``, else CustomKind."""
    code_digest: str


def load_materializations(project_root: Path) -> dict[str, Materialization]:
    """Name (lower case) → the class, from the project's folder and the installed entry points (imported afresh)."""
    files = python_files(project_root / MATERIALIZATIONS_FOLDER)
    with project_code(project_root):
        modules = [import_project_file(file, project_root, "materialization file") for file in files]
        classes = [cls for module in modules for cls in _classes_of(module)]
        classes += [_entry_point_class(entry) for entry in metadata.entry_points(group=ENTRY_POINT_GROUP)]
        found = [_described(cls) for cls in classes]
    return {item.name: item for item in found}


def bind_materializations(
    project_root: Path, models: dict[str, Model], names: set[str], broken: list[BrokenModel] | None
) -> dict[str, Model]:
    """Every CUSTOM model of ``names`` (one repository's) gets its class's code digest in its kind, so that editing
    the class re-versions the models it writes. A class no file defines is a load error at the model (in
    ``broken``, when given, the model is set aside instead)."""
    custom = [m for m in models.values() if m.name in names and isinstance(m.kind, CustomKind)]
    if not custom:
        return models
    known = load_materializations(project_root)
    bound = dict(models)
    for model in custom:
        try:
            digest = materialization_of(model, known).code_digest
        except ProjectError as error:
            if broken is None:
                raise
            broken.append(BrokenModel(path=model.path, name=model.name, error=str(error)))
            del bound[model.name]
            continue
        bound[model.name] = model.model_copy(update={"kind": model.kind.model_copy(update={"code_digest": digest})})
    return bound


def materialization_of(model: Model, known: dict[str, Materialization]) -> Materialization:
    name = model.kind.materialization.lower()
    if name not in known:
        raise ProjectError(
            f"model {model.name} uses custom materialization {model.kind.materialization!r}, which no class defines",
            path=model.path,
            line=model.line,
            hint=f"define a CustomMaterialization subclass with NAME = {model.kind.materialization!r} in "
            f"{MATERIALIZATIONS_FOLDER}/ or install the package that provides it (known: {', '.join(sorted(known)) or 'none'})",
        )
    return known[name]


def _classes_of(module: object) -> Iterable[type[CustomMaterialization]]:
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, CustomMaterialization) and value is not CustomMaterialization:
            if value.__module__ == getattr(module, "__name__", None):  # defined here, not imported from elsewhere
                yield value


def _entry_point_class(entry: metadata.EntryPoint) -> type[CustomMaterialization]:
    try:
        loaded = entry.load()
    except Exception as error:
        raise ProjectError(f"loading the materialization entry point {entry.name!r} ({entry.value}) raised "
                           f"{type(error).__name__}: {error}", hint="fix or uninstall the package that declares it") from error
    if not (isinstance(loaded, type) and issubclass(loaded, CustomMaterialization)):
        raise ProjectError(f"materialization entry point {entry.name!r} ({entry.value}) is not a CustomMaterialization "
                           "subclass", hint="point the entry point at a class that subclasses sqlmesh.CustomMaterialization")
    return loaded


def _described(cls: type[CustomMaterialization]) -> Materialization:
    name = (getattr(cls, "NAME", "") or cls.__name__).lower()
    kind_type = _kind_type(cls)
    digest = _class_digest(cls, kind_type)
    return Materialization(name=name, implementation=cls, kind_type=kind_type, code_digest=digest)


def _kind_type(cls: type[CustomMaterialization]) -> type[KindSpecOfCustom]:
    for base in getattr(cls, "__orig_bases__", ()):
        if typing.get_origin(base) is CustomMaterialization:
            for argument in typing.get_args(base):
                if not (isinstance(argument, type) and issubclass(argument, KindSpecOfCustom)):
                    raise ProjectError(f"materialization {cls.__name__}'s kind {argument!r} is not a CustomKind subclass",
                                       path=Path(inspect.getfile(cls)), hint="subclass sqlmesh.CustomKind")
                return argument
    return KindSpecOfCustom


def _class_digest(*classes: type) -> str:
    """The classes' sources and their bases' up to ours, through the AST (comments and layout do not count)."""
    parts = []
    for klass in (klass for cls in classes for klass in cls.__mro__):
        if klass.__module__.startswith(("dagster_sparkmesh", "typing", "builtins")):
            continue
        try:
            parts.append(ast.unparse(parse_python(textwrap.dedent(inspect.getsource(klass)))))
        except (OSError, TypeError, SyntaxError):  # no source to read: its qualified name stands for it
            parts.append(f"{klass.__module__}.{klass.__qualname__}")
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()
