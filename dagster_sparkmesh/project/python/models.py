"""Python models: functions decorated with ``@model(...)`` in ``models/**/*.py``, with SQLMesh's contract.

A function returns (or yields) Spark or pandas DataFrames at run time, or, with ``is_sql=True``, the model's
query at load time (``python_sql_models``). One decorator may declare several models (``python_blueprints``).
Loading imports the file inside ``project_imports`` (``import sqlmesh`` gets our API, the project root is
importable) under a module name derived from its absolute path, so two ``orders.py`` in different folders never
collide and a model file never shadows an installed module. The decorator only attaches a spec to the function;
the Model records are built here, at load time, checking every argument (``python_model_options``). Pyspark is
never imported by this module.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import inspect
import json
import linecache
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any


from dagster_sparkmesh.macros.code_digest import parse_python
from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.project.column_schema import ModelColumns
from dagster_sparkmesh.project.python import options as python_model_options
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.externals import normalize_table_name
from dagster_sparkmesh.project.python.audits import audits
from dagster_sparkmesh.project.python.blueprints import Blueprint, expand
from dagster_sparkmesh.project.python.dependencies import model_dependencies
from dagster_sparkmesh.model.table_formats import merged_properties
from dagster_sparkmesh.project.python.kind_options import model_kind
from dagster_sparkmesh.project.python.options import IGNORED_ARGUMENTS, SUPPORTED_ARGUMENTS, Where
from dagster_sparkmesh.project.python.sql_models import project_default_catalog, project_variables, query_of
from dagster_sparkmesh.project.signals import signal_calls
from dagster_sparkmesh.sqlmesh_api.importer import project_imports
from dagster_sparkmesh.model.dialects import DIALECT_HINT, is_known_dialect

SPEC_ATTRIBUTE = "__sparkmesh_model__"
_MODULE_PREFIX = "sparkmesh_python_model"


@dataclass(frozen=True)
class PythonModelSpec:
    """What ``@model(...)`` recorded, plus where it was written (for errors); checked when the model loads."""

    name: object
    line: int
    options: dict[str, Any] = field(default_factory=dict)


def model(name: str | None = None, *, is_sql: bool = False, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a Python model: ``def execute(context, start, end, execution_time, **kwargs) -> DataFrame``.

    The arguments are SQLMesh's (``kind``, ``columns``, ``depends_on``, ``cron``, ``start``, ``grains`` ...; see
    ``python_model_options``). ``audits`` entries are SQL-style calls (``"not_null(columns := (id, ds))"``) or
    ``(name, {arg: value})`` where, as in SQLMesh, a sqlglot expression is SQL (``exp.column("id")``) and any other
    value a literal (``"shipped"`` is the string 'shipped').
    """
    caller = inspect.currentframe().f_back  # type: ignore[union-attr]
    line = caller.f_lineno if caller else 1
    unknown = set(options) - SUPPORTED_ARGUMENTS - IGNORED_ARGUMENTS
    if unknown:
        _reject_unknown_arguments(unknown, caller, line)
    spec = PythonModelSpec(name=name, line=line, options={**options, "is_sql": is_sql})

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        setattr(function, SPEC_ATTRIBUTE, spec)
        return function

    return decorate


def _reject_unknown_arguments(unknown: set[str], caller: Any, line: int) -> None:
    known = sorted(SUPPORTED_ARGUMENTS)
    first = sorted(unknown)[0]
    near = difflib.get_close_matches(first, known, n=1)
    raise ProjectError(
        f"unknown argument {first!r} to @model",
        path=caller.f_code.co_filename if caller else None,
        line=line,
        snippet=linecache.getline(caller.f_code.co_filename, line) if caller else first,
        hint=(f"did you mean {near[0]!r}? " if near else "") + f"known arguments: name, {', '.join(known)}",
    )


def load_python_model(path: Path, defaults: ModelDefaults, project_root: Path | None = None) -> Model:
    """The Model record of the file's one ``@model`` function (several, or blueprints: ``load_python_models``)."""
    loaded = _load(path, project_root)
    function, spec = _only_model_function(loaded.functions, path)
    models = _models_of(loaded, function, spec, defaults)
    if len(models) != 1:
        raise ProjectError(f"{path.name} declares {len(models)} models (blueprints)", path=path,
                           hint="load it with load_python_models")
    return models[0]


def load_python_models(
    path: Path, defaults: ModelDefaults, project_root: Path | None = None, columns: ModelColumns | None = None
) -> list[Model]:
    """Import ``path`` and build the Model records of its ``@model`` functions (one per blueprint).

    As in SQLMesh, a file under ``models/`` may declare several models, or none (a helper module). ``columns``:
    the other models' columns, for ``is_sql`` functions calling ``evaluator.columns_to_types`` (the loader's).
    """
    loaded = _load(path, project_root, columns)
    return [model for function, spec in loaded.functions for model in _models_of(loaded, function, spec, defaults)]


def _load(path: Path, project_root: Path | None, columns: ModelColumns | None = None) -> _Loaded:
    path = path.resolve()
    source = _read_source(path)
    module, helpers = _import_file(path, source, project_root)
    tree = parse_python(source, filename=str(path))
    root = project_root or project_root_of(path)
    return _Loaded(path=path, root=root, source=source, tree=tree, module=module, helpers=helpers,
                   functions=_model_functions(module), columns=columns)


def _models_of(loaded: _Loaded, function: Callable[..., Any], spec: PythonModelSpec, defaults: ModelDefaults) -> list[Model]:
    first = Where(model=str(spec.name), path=loaded.path, line=spec.line)
    return [_build_model(loaded, function, spec, blueprint, defaults) for blueprint in expand(spec.name, spec.options, first)]


@dataclass(frozen=True)
class _Loaded:
    """An imported model file: what every model it declares is built from."""

    path: Path
    root: Path
    source: str
    tree: ast.Module
    module: ModuleType
    helpers: list[Path]
    functions: list[tuple[Callable[..., Any], PythonModelSpec]]
    columns: ModelColumns | None


def _build_model(
    loaded: _Loaded, function: Callable[..., Any], spec: PythonModelSpec, blueprint: Blueprint, defaults: ModelDefaults
) -> Model:
    path, options = loaded.path, blueprint.options
    where = Where(model=_model_name(blueprint.name, spec.line, path), path=path, line=spec.line)
    dialect = _dialect(options.get("dialect"), defaults, where)
    code = _query_fields if options.get("is_sql") else _function_fields
    return Model(
        name=normalize_table_name(where.model, path=path, line=spec.line),
        kind=model_kind(options, where, defaults),
        path=path,
        line=spec.line,
        dialect=dialect,
        python_code=loaded.source,
        columns=python_model_options.columns(options.get("columns"), where, dialect),
        audits=audits(_with_default_audits(defaults.audits, options.get("audits")), where),
        signals=signal_calls(options.get("signals"), path=path, line=spec.line),
        session_properties=merged_properties(
            defaults.session_properties, python_model_options.session_properties(options.get("session_properties"), where)
        ),
        on_virtual_update=_statements(
            "on_virtual_update", options, defaults, where, dialect
        ),
        **code(loaded, function, blueprint, where, dialect, defaults),
        **python_model_options.scalar_options(options, where, defaults),
    )


def _function_fields(
    loaded: _Loaded, function: Callable[..., Any], blueprint: Blueprint, where: Where, dialect: str, defaults: ModelDefaults
) -> dict[str, Any]:
    """A model computed by its function at run time."""
    options = blueprint.options
    return {
        "source": "python",
        "python_source": _normalized_source(loaded.tree, loaded.helpers, blueprint.variables),
        "python_entrypoint": f"{where.path}:{function.__name__}",
        "blueprint_variables": blueprint.variables,
        # Its own name stays: the loader turns it into ``depends_on_self`` (a table to create before the first run).
        "depends_on": model_dependencies(function, loaded.module, loaded.tree, options.get("depends_on"), where.path,
                                         where.line),
        "pre_statements": _statements("pre_statements", options, defaults, where, dialect),
        "post_statements": _statements("post_statements", options, defaults, where, dialect),
    }


def _query_fields(
    loaded: _Loaded, function: Callable[..., Any], blueprint: Blueprint, where: Where, dialect: str, defaults: ModelDefaults
) -> dict[str, Any]:
    """``is_sql=True``: a SQL model whose query the function wrote, once, at load time."""
    options = blueprint.options
    variables = project_variables(loaded.root)
    blueprint_values = {k: json.loads(v) for k, v in blueprint.variables}
    parts = query_of(function, where, dialect, defaults, variables, blueprint_values, loaded.columns,
                     project_default_catalog(loaded.root))
    declared = options.get("depends_on")
    declared_names = frozenset()
    if declared is not None:  # SQL models read their query's tables plus the declared ones
        declared_names = model_dependencies(function, loaded.module, loaded.tree, declared, where.path, where.line)
    return {
        "source": "sql",
        "query": parts.query,
        "depends_on": parts.references | declared_names,
        "pre_statements": _statements("pre_statements", options, defaults, where, dialect) + parts.pre_statements,
        "post_statements": _statements("post_statements", options, defaults, where, dialect, after=parts.post_statements),
    }


def _statements(
    argument: str, options: dict[str, Any], defaults: ModelDefaults, where: Where, dialect: str, after: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """``model_defaults``' statements of this kind, then the model's own (``after``: the ones its query put last,
    before the ``@model`` argument's)."""
    inherited = python_model_options.statements(argument, list(getattr(defaults, argument)) or None, where, dialect)
    own = python_model_options.statements(argument, options.get(argument), where, dialect)
    return inherited + (after + own if argument == "post_statements" else own)


def _with_default_audits(default: tuple[str, ...], own: object) -> object:
    """``model_defaults.audits`` before the model's own, as SQLMesh adds them (a wrong ``own`` stays as it was, for
    its error)."""
    if not default or not isinstance(own, (list, tuple, type(None))):
        return own
    return [*default, *(own or ())]


def _model_name(name: object, line: int, path: Path) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ProjectError(
            f"@model needs the model's name as its first argument, not {name!r}",
            path=path,
            line=line,
            hint='write @model("db.model_name", ...)',
        )
    return name


def _dialect(value: object, defaults: ModelDefaults, where: Where) -> str:
    dialect = python_model_options.optional_text("dialect", value, where) or defaults.dialect
    if not is_known_dialect(dialect.lower()):
        raise where.error("dialect", f"unknown dialect {dialect!r}", value, DIALECT_HINT)
    return dialect.lower()


def _normalized_source(tree: ast.Module, helpers: list[Path], blueprint: tuple[tuple[str, str], ...] = ()) -> str:
    """What is hashed: the file's AST (comments and layout don't count), that of each project module it imported
    and the blueprint's variables: each is part of what the model computes, so an edit must change the fingerprint.
    """
    parts = [ast.dump(tree)] + ([f"# blueprint {list(blueprint)}"] if blueprint else [])
    for helper in helpers:
        parts.append(f"# {helper.name}\n" + ast.dump(parse_python(_read_source(helper), filename=str(helper))))
    return "\n".join(parts)


def resolve_python_entrypoint(entrypoint: str) -> Callable[..., Any]:
    """The function named by ``/abs/path/file.py:function`` (imported afresh, so edits are picked up)."""
    file_name, _, function_name = entrypoint.rpartition(":")
    path = Path(file_name)
    if not file_name or not function_name or not path.is_file():
        raise ProjectError(
            f"Python model entrypoint {entrypoint!r} does not name an existing file and function",
            path=path if file_name else None,
            hint="reload the project: the model file may have moved",
        )
    module, _ = _import_file(path, _read_source(path))
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ProjectError(
            f"{path.name} has no function {function_name!r}", path=path, hint="reload the project: the model may have been renamed"
        )
    return function


def _read_source(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ProjectError(f"cannot read Python model {path.name}: {error}", path=path) from error


def _module_name(path: Path) -> str:
    digest = hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:16]
    return f"{_MODULE_PREFIX}_{path.stem}_{digest}"


def _import_file(path: Path, source: str, project_root: Path | None = None) -> tuple[ModuleType, list[Path]]:
    """Execute the file as a fresh module; an exception becomes a ProjectError at the file's failing line.

    The source is compiled here rather than through an import loader so that loading a project never writes
    ``__pycache__`` folders into it, and an edited file is always re-read. It runs inside ``project_imports``:
    ``import sqlmesh`` gets our API and the project root is importable. Returns the module and the files of
    the project modules it imported.
    """
    name = _module_name(path)
    module = ModuleType(name)
    module.__file__ = str(path)
    # Registered under its unique name only while it runs (dataclasses look their module up there). Afterwards it
    # is not, like the project's helper modules: Spark's pickler then ships a UDF defined in the file by value, as
    # Spark's Python workers could never import the module by name.
    sys.modules[name] = module
    try:
        with project_imports(project_root or project_root_of(path)) as helpers:
            exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - running the user's model file is the point
    except ProjectError:
        raise
    except SyntaxError as error:
        if Path(error.filename or "") != path:  # in a module the file imports
            raise _import_error(path, source, error) from error
        raise ProjectError(
            f"syntax error in Python model: {error.msg}",
            path=path,
            line=error.lineno,
            col=error.offset,
            snippet=error.text,
            hint="fix the Python syntax",
        ) from error
    except Exception as error:
        raise _import_error(path, source, error) from error
    finally:
        sys.modules.pop(name, None)
    return module, [helper for helper in helpers if helper != path]


def project_root_of(path: Path) -> Path:
    """The folder holding the ``models/`` folder the file is in (the file's folder when it is not in one)."""
    for parent in path.parents:
        if parent.name == "models":
            return parent.parent
    return path.parent


def _import_error(path: Path, source: str, error: Exception) -> ProjectError:
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if Path(frame.filename) == path]
    line = frames[-1].lineno if frames else None
    lines = source.splitlines()
    snippet = lines[line - 1] if line and 0 < line <= len(lines) else None
    return ProjectError(
        f"importing the Python model raised {type(error).__name__}: {error}",
        path=path,
        line=line,
        snippet=snippet,
        hint=_import_hint(error),
    )


def _import_hint(error: Exception) -> str:
    if isinstance(error, ModuleNotFoundError) and error.name:
        return (f"install {error.name.split('.')[0]!r} where sparkmesh runs, or put the module in the project folder "
                "(project files import from the project root, as in SQLMesh)")
    return "model files run at load time: keep work that can fail inside the model function"


def _model_functions(module: ModuleType) -> list[tuple[Callable[..., Any], PythonModelSpec]]:
    """The module's own ``@model`` functions (not ones it imported), in the order written."""
    found = [
        (value, getattr(value, SPEC_ATTRIBUTE))
        for value in vars(module).values()
        if callable(value) and hasattr(value, SPEC_ATTRIBUTE) and getattr(value, "__module__", None) == module.__name__
    ]
    return sorted(found, key=lambda pair: pair[1].line)


def _only_model_function(
    found: list[tuple[Callable[..., Any], PythonModelSpec]], path: Path
) -> tuple[Callable[..., Any], PythonModelSpec]:
    if len(found) != 1:
        names = ", ".join(function.__name__ for function, _ in found)
        raise ProjectError(
            f"a Python model file must define exactly one @model function, found {len(found)}" + (f" ({names})" if names else ""),
            path=path,
            line=found[1][1].line if len(found) > 1 else None,
            hint="load the file with load_python_models, which takes any number",
        )
    return found[0]
