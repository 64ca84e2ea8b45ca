"""Python models: a function decorated with ``@model(...)`` in ``models/*.py`` that returns a Spark DataFrame.

Loading imports the file under a module name derived from its absolute path, so two ``orders.py`` in different
folders never collide and a model file never shadows an installed module. The decorator only attaches a spec to
the function; the Model record is built here, at load time. Pyspark is never imported by this module.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import inspect
import linecache
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import TypeAdapter, ValidationError
from sqlglot import exp
from sqlglot.errors import ParseError

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.kinds import KIND_ALIASES, ModelKind
from dagster_sparkmesh.model.records import AuditCall, Model
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.externals import normalize_table_name, spark_type

SPEC_ATTRIBUTE = "__sparkmesh_model__"
_MODULE_PREFIX = "sparkmesh_python_model"
_KIND_ADAPTER: TypeAdapter[Any] = TypeAdapter(ModelKind)


@dataclass(frozen=True)
class PythonModelSpec:
    """What ``@model(...)`` recorded, plus where it was written (for errors)."""

    name: str
    kind: dict[str, Any] | str
    line: int
    columns: dict[str, str] | None = None
    depends_on: list[str] | None = None
    options: dict[str, Any] = field(default_factory=dict)


def model(
    name: str,
    *,
    kind: dict[str, Any] | str = "FULL",
    columns: dict[str, str] | None = None,
    depends_on: list[str] | None = None,
    cron: str | None = None,
    start: str | None = None,
    end: str | None = None,
    owner: str | None = None,
    description: str | None = None,
    tags: list[str] | None = None,
    grains: list[str] | None = None,
    partitioned_by: list[str] | None = None,
    audits: list[str | tuple[str, dict[str, Any]]] | None = None,
    enabled: bool = True,
    **unknown: Any,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a Python model: ``def execute(context, start, end, execution_time, **kwargs) -> DataFrame``.

    ``audits`` entries are SQL-style calls (``"not_null(columns := (id, ds))"``) or ``(name, {arg: value})`` where
    a string value is SQL text (a column or expression: write ``"'shipped'"`` for a string literal).
    """
    caller = inspect.currentframe().f_back  # type: ignore[union-attr]
    line = caller.f_lineno if caller else 1
    if unknown:
        _reject_unknown_arguments(unknown, caller, line)
    options = dict(
        cron=cron, start=start, end=end, owner=owner, description=description, tags=tags,
        grains=grains, partitioned_by=partitioned_by, audits=audits, enabled=enabled,
    )  # fmt: skip
    spec = PythonModelSpec(name=name, kind=kind, line=line, columns=columns, depends_on=depends_on, options=options)

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        setattr(function, SPEC_ATTRIBUTE, spec)
        return function

    return decorate


def _reject_unknown_arguments(unknown: dict[str, Any], caller: Any, line: int) -> None:
    known = [name for name in inspect.signature(model).parameters if name != "unknown"]
    first = sorted(unknown)[0]
    near = difflib.get_close_matches(first, known, n=1)
    raise ProjectError(
        f"unknown argument {first!r} to @model",
        path=caller.f_code.co_filename if caller else None,
        line=line,
        snippet=linecache.getline(caller.f_code.co_filename, line) if caller else first,
        hint=(f"did you mean {near[0]!r}? " if near else "") + f"known arguments: {', '.join(known)}",
    )


def load_python_model(path: Path, defaults: ModelDefaults) -> Model:
    """Import ``path`` and build the Model record of its one ``@model``-decorated function."""
    path = path.resolve()
    source = _read_source(path)
    module = _import_file(path, source)
    function, spec = _find_model_function(module, path)
    return Model(
        name=normalize_table_name(spec.name, path=path, line=spec.line),
        kind=_build_kind(spec, path, defaults),
        source="python",
        path=path,
        line=spec.line,
        python_source=ast.dump(ast.parse(source, filename=str(path))),
        python_entrypoint=f"{path}:{function.__name__}",
        columns=_columns(spec, path),
        depends_on=frozenset(normalize_table_name(name, path=path, line=spec.line) for name in spec.depends_on or ()),
        audits=tuple(_audit_call(entry, path, spec.line) for entry in spec.options["audits"] or ()),
        **_scalar_options(spec, defaults),
    )


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
    module = _import_file(path, _read_source(path))
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


def _import_file(path: Path, source: str) -> ModuleType:
    """Execute the file as a fresh module; an exception becomes a ProjectError at the file's failing line.

    The source is compiled here rather than through an import loader so that loading a project never writes
    ``__pycache__`` folders into it, and an edited file is always re-read.
    """
    name = _module_name(path)
    module = ModuleType(name)
    module.__file__ = str(path)
    # Registered under its unique name while it runs: dataclasses and pickling look modules up there.
    sys.modules[name] = module
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - running the user's model file is the point
    except ProjectError:
        raise
    except SyntaxError as error:
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
    return module


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
        hint="model files run at load time: keep work that can fail inside the model function",
    )


def _find_model_function(module: ModuleType, path: Path) -> tuple[Callable[..., Any], PythonModelSpec]:
    found = [
        (value, getattr(value, SPEC_ATTRIBUTE))
        for value in vars(module).values()
        if callable(value) and hasattr(value, SPEC_ATTRIBUTE) and getattr(value, "__module__", None) == module.__name__
    ]
    if len(found) != 1:
        names = ", ".join(function.__name__ for function, _ in found)
        raise ProjectError(
            f"a Python model file must define exactly one @model function, found {len(found)}" + (f" ({names})" if names else ""),
            path=path,
            line=found[1][1].line if len(found) > 1 else None,
            hint="put each Python model in its own file under models/",
        )
    return found[0]


def _build_kind(spec: PythonModelSpec, path: Path, defaults: ModelDefaults) -> Any:
    raw = {"name": spec.kind} if isinstance(spec.kind, str) else dict(spec.kind)
    raw["name"] = str(raw.get("name", "")).upper()
    raw["name"] = KIND_ALIASES.get(raw["name"], raw["name"])
    if isinstance(raw.get("unique_key"), (str, list)):
        raw["unique_key"] = (raw["unique_key"],) if isinstance(raw["unique_key"], str) else tuple(raw["unique_key"])
    if defaults.batch_size is not None and raw["name"].startswith("INCREMENTAL") and "batch_size" not in raw:
        raw["batch_size"] = defaults.batch_size
    try:
        kind = _KIND_ADAPTER.validate_python(raw)
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise ProjectError(
            f"invalid kind for Python model {spec.name}: {where}: {problem['msg']}",
            path=path,
            line=spec.line,
            snippet=repr(spec.kind),
            hint="e.g. kind=dict(name=\"INCREMENTAL_BY_TIME_RANGE\", time_column=\"ds\") or kind=\"FULL\"",
        ) from error
    _refuse_odd_column_names(spec, path, _kind_columns(kind) + list(spec.options["partitioned_by"] or ()))
    return kind


_COLUMN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KIND_COLUMN_FIELDS = ("time_column", "unique_key", "valid_from_name", "valid_to_name", "updated_at_name", "columns")


def _kind_columns(kind: Any) -> list[str]:
    names: list[str] = []
    for field_name in _KIND_COLUMN_FIELDS:
        value = getattr(kind, field_name, None)
        names.extend([value] if isinstance(value, str) else [n for n in value or () if n != "*"])
    return names


def _refuse_odd_column_names(spec: PythonModelSpec, path: Path, names: list[object]) -> None:
    """The column names the writers put in generated SQL: plain identifiers only, as a SQL model's header demands."""
    for name in names:
        if not isinstance(name, str) or not _COLUMN_NAME.match(name):
            raise ProjectError(
                f"invalid column name {name!r} in Python model {spec.name}",
                path=path,
                line=spec.line,
                snippet=repr(name),
                hint="use letters, digits and underscores only, starting with a letter or underscore",
            )


def _columns(spec: PythonModelSpec, path: Path) -> tuple[tuple[str, str], ...]:
    return tuple(
        (str(column).lower(), spark_type(kind, path=path, line=spec.line)) for column, kind in (spec.columns or {}).items()
    )


def _scalar_options(spec: PythonModelSpec, defaults: ModelDefaults) -> dict[str, Any]:
    options = spec.options
    return {
        "cron": options["cron"] or defaults.cron,
        "start": _iso(options["start"]) or defaults.start,
        "end": _iso(options["end"]),
        "owner": options["owner"] or defaults.owner,
        "description": options["description"],
        "tags": tuple(options["tags"] or ()),
        "grains": tuple(str(grain).lower() for grain in options["grains"] or ()),
        "partitioned_by": tuple(str(column).lower() for column in options["partitioned_by"] or ()),
        "enabled": bool(options["enabled"]),
    }


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _audit_call(entry: Any, path: Path, line: int) -> AuditCall:
    if isinstance(entry, str):
        return parse_audit_call(entry, path=path, line=line)
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], dict):
        return AuditCall(name=entry[0].lower(), args=tuple((str(k).lower(), _sql_value(v)) for k, v in entry[1].items()))
    raise ProjectError(
        f"invalid audit {entry!r}",
        path=path,
        line=line,
        hint="write audits as \"not_null(columns := (id))\" or (\"not_null\", {\"columns\": [\"id\"]})",
    )


def parse_audit_call(text: str, *, path: Path, line: int | None = None) -> AuditCall:
    """``name`` or ``name(arg := value, ...)`` (SQL syntax, as in a MODEL block) → AuditCall."""
    try:
        call = exp.maybe_parse(text.strip(), dialect="spark")
    except ParseError as error:
        raise ProjectError(f"cannot parse audit {text!r}: {error}", path=path, line=line, snippet=text) from error
    if isinstance(call, exp.Column) and not call.table:
        return AuditCall(name=call.name.lower())
    if not isinstance(call, exp.Func):
        raise ProjectError(f"audit {text!r} is not a call", path=path, line=line, snippet=text, hint="write name(arg := value)")
    args = []
    for argument in _call_arguments(call):
        if not isinstance(argument, (exp.PropertyEQ, exp.EQ)) or not isinstance(argument.this, (exp.Column, exp.Identifier)):
            raise ProjectError(
                f"audit arguments must be named: {text!r}", path=path, line=line, snippet=text, hint="write arg := value"
            )
        args.append((argument.this.name.lower(), argument.expression.sql(dialect="spark")))
    name = call.name if isinstance(call, exp.Anonymous) else call.sql_name()
    return AuditCall(name=name.lower(), args=tuple(args))


def _call_arguments(call: exp.Func) -> list[exp.Expression]:
    if isinstance(call, exp.Anonymous):
        return list(call.expressions)
    # An audit named like a Spark function (e.g. ``count``) parses as that function: flatten its arguments.
    values = [value if isinstance(value, list) else [value] for value in call.args.values()]
    return [value for group in values for value in group if isinstance(value, exp.Expression)]


def _sql_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_sql_value(item) for item in value) + ")"
    return exp.convert(value).sql(dialect="spark")
