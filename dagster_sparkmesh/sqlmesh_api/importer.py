"""Resolve ``import sqlmesh...`` to this package, but only while a project file is being imported.

Why a scoped meta path finder rather than a ``sqlmesh`` package of our own on ``sys.path``: a real SQLMesh may be
installed in the same environment (a team migrating runs both), and shadowing it globally would break it. So for
the duration of ``project_imports(root)``:

- every ``sqlmesh`` / ``sqlmesh.*`` entry already in ``sys.modules`` (a real SQLMesh imported by the host) is set
  aside, and our finder, first on ``sys.meta_path``, answers for the names in ``MODULES``;
- the project root is first on ``sys.path``, so project files import helpers as SQLMesh lets them
  (``from helper import x``, ``from macros.utils import y``).

On exit everything is put back: our ``sqlmesh`` modules and the project's helper modules leave ``sys.modules``
(the next project may have its own ``helper.py``), and the real SQLMesh modules return. Loading therefore
behaves the same whether or not SQLMesh is installed. Functions and classes the project obtained stay bound in
its modules, so a model function keeps working after the import is over. A lock serializes project imports:
``sys.modules`` is process-wide.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from dagster_sparkmesh.user_exit import ExitCalled, exit_error, exits_refused

_PACKAGE = "dagster_sparkmesh.sqlmesh_api"

CONFIG_SUBMODULES = (
    "categorizer", "common", "connection", "format", "gateway", "janitor", "linter", "loader", "migration", "model",
    "naming", "plan", "root", "run", "scheduler", "ui",
)  # fmt: skip

MODULES: dict[str, str] = {
    "sqlmesh": f"{_PACKAGE}.surface",
    "sqlmesh.core": "",
    "sqlmesh.core.model": f"{_PACKAGE}.model_package",
    "sqlmesh.core.model.kind": f"{_PACKAGE}.kinds",
    "sqlmesh.core.macros": f"{_PACKAGE}.macros",
    "sqlmesh.core.node": f"{_PACKAGE}.node",
    "sqlmesh.core.signal": f"{_PACKAGE}.signals",
    "sqlmesh.core.context": f"{_PACKAGE}.execution_context",
    "sqlmesh.core.config": f"{_PACKAGE}.config_classes",
    # SQLMesh's config is a package, and config.py files import from its modules (``...config.common``,
    # ``...config.linter``): each stands for the same classes, built on demand as in ``sqlmesh.core.config``.
    **{f"sqlmesh.core.config.{name}": f"{_PACKAGE}.config_classes" for name in CONFIG_SUBMODULES},
    "sqlmesh.core.notification_target": f"{_PACKAGE}.config_classes",
    "sqlmesh.core.user": f"{_PACKAGE}.config_classes",
    "sqlmesh.core.snapshot": "",
    "sqlmesh.core.snapshot.evaluator": f"{_PACKAGE}.materializations",
    "sqlmesh.utils": "",
    "sqlmesh.utils.pydantic": f"{_PACKAGE}.validators",
    "sqlmesh.utils.date": f"{_PACKAGE}.dates",
}
"""``sqlmesh`` module name → the module of this package that stands for it ("": an empty package)."""

_LOCK = threading.RLock()


class _SqlmeshFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the names in ``MODULES``.

    Each import gets a fresh module holding our module's public names: the import system writes ``__spec__``
    and child-module attributes onto what it imports, which must not land on our own modules.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "sqlmesh" and not fullname.startswith("sqlmesh."):
            return None
        if fullname not in MODULES:
            # Refuse here, not with ModuleNotFoundError from the next finder: the message says what to do.
            raise ImportError(
                f"{fullname} is not part of the SQLMesh API that sparkmesh provides "
                f"(supported: {', '.join(sorted(MODULES))})",
                name=fullname,
            )
        is_package = any(other.startswith(fullname + ".") for other in MODULES)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=is_package)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = ModuleType(spec.name)
        if MODULES[spec.name]:
            implementation = importlib.import_module(MODULES[spec.name])
            module.__doc__ = implementation.__doc__
            exported = getattr(implementation, "__all__", None) or [n for n in vars(implementation) if not n.startswith("_")]
            module.__dict__.update({name: getattr(implementation, name) for name in exported})
            if hasattr(implementation, "__getattr__"):
                module.__dict__["__getattr__"] = implementation.__getattr__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The implementation module is already executed; nothing to run."""


_FINDER = _SqlmeshFinder()


@contextmanager
def project_imports(root: Path | None = None) -> Iterator[list[Path]]:
    """Inside: ``import sqlmesh...`` gets this package and ``root`` is importable. Re-entrant.

    The list it yields is filled on exit with the files of the project modules imported inside (sorted).
    """
    imported: list[Path] = []
    with _LOCK:
        if _FINDER in sys.meta_path:  # nested: the outer scope has set everything up and will undo it
            yield imported
            return
        # Set aside: a real SQLMesh, and whatever holds the names of the project's own top-level modules (another
        # project's ``macros`` package, say), so that ``import macros`` finds this project's.
        shadowed = ["sqlmesh", *(_top_level_names(root) if root is not None else ())]
        real = {name: module for top in shadowed for name, module in _set_aside(top).items()}
        before = set(sys.modules)
        root_text = str(root) if root is not None else None
        if root_text is not None:
            sys.path.insert(0, root_text)
        sys.meta_path.insert(0, _FINDER)
        try:
            with exits_refused():
                yield imported
        except (SystemExit, ExitCalled) as error:  # project code must not end the process: say where it tried
            raise exit_error(error, "project code", root) from None
        finally:
            sys.meta_path.remove(_FINDER)
            if root_text is not None and root_text in sys.path:
                sys.path.remove(root_text)
            imported.extend(_forget_new_modules(before, root))
            for top in shadowed:
                _set_aside(top)
            sys.modules.update(real)


def _set_aside(top: str) -> dict[str, ModuleType]:
    # A snapshot (list() runs without a thread switch): another thread may import while this one reads the table.
    names = [name for name in list(sys.modules) if name == top or name.startswith(top + ".")]
    return {name: sys.modules.pop(name) for name in names}


def _top_level_names(root: Path) -> list[str]:
    """The modules and packages at the project root (``helper.py``, ``macros/`` ...)."""
    if not root.is_dir():
        return []
    names = [path.stem for path in root.glob("*.py")]
    names += [path.name for path in root.iterdir() if path.is_dir() and next(path.rglob("*.py"), None) is not None]
    return sorted({name for name in names if name.isidentifier()})


def _forget_new_modules(before: set[str], root: Path | None) -> list[Path]:
    """Drop modules imported from the project folder: they belong to this load, not to the process.

    A package without ``__init__.py`` has no ``__file__``: its ``__path__`` says where it came from.
    """
    if root is None:
        return []
    files = []
    for name in set(sys.modules) - before:
        module = sys.modules[name]
        file = getattr(module, "__file__", None)
        locations = [file] if file else list(getattr(module, "__path__", None) or [])
        if locations and all(_is_within(Path(location), root) for location in locations):
            del sys.modules[name]
            if file:
                files.append(Path(file).resolve())
    return sorted(files)


def _is_within(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True
