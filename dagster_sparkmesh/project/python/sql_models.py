"""``@model(..., is_sql=True)``: a Python function that returns the model's query (SQLMesh's "Python models
returning SQL").

The function is called once, at load time, with an evaluator that offers ``var``, ``blueprint_var``, ``dialect``,
``parse_one`` and ``columns_to_types``; what it returns (SQL text or a sqlglot expression, macros such as
``@start_ds`` included) then goes through the SQL model pipeline like a ``.sql`` file's query: same parsing, macro
handling, canonical form and table references. So the model is a SQL model whose text a function wrote: its query
is what is fingerprinted.

``columns_to_types("db.parent")`` needs the other models: the loader loads every other model first, then such
functions (``ColumnsPending`` tells it the function asked too early), in rounds so one may ask for another's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import traceback

import sqlglot
from sqlglot import exp

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.column_schema import ModelColumns
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.externals import normalize_table_name
from dagster_sparkmesh.project.python.options import Where


@dataclass(frozen=True)
class QueryParts:
    query: str
    pre_statements: tuple[str, ...]
    post_statements: tuple[str, ...]
    references: frozenset[str]


class ColumnsPending(Exception):
    """An is_sql function asked for the columns of a model not loaded yet: the loader loads its file again later.
    ``asking``, ``path`` and ``line``: the model whose function asked, and the line that did (set by ``query_of``)."""

    def __init__(self, model: str) -> None:
        super().__init__(model)
        self.model = model
        self.asking = ""
        self.path: Path | None = None
        self.line: int | None = None


class LoadTimeEvaluator:
    """What an ``is_sql`` function receives as ``evaluator`` while its model loads."""

    runtime_stage = "loading"

    def __init__(self, dialect: str, variables: Mapping[str, object], blueprint: Mapping[str, object],
                 where: Where, columns: ModelColumns | None) -> None:
        self.dialect = dialect
        self.locals: dict[str, object] = time_placeholders()
        self._variables = variables
        self._blueprint = blueprint
        self._where = where
        self._columns = columns

    def var(self, name: str, default: object = None) -> object:
        return self._variables.get(name.lower(), default)

    def blueprint_var(self, name: str, default: object = None) -> object:
        return self._blueprint.get(name.lower(), default)

    def parse_one(self, sql: str) -> exp.Expression:
        return sqlglot.parse_one(sql, dialect=self.dialect)

    def columns_to_types(self, model_name: str | exp.Table) -> dict[str, exp.DataType]:
        if self._columns is None:
            raise LookupError("evaluator.columns_to_types reads the other models: load the project (load_project)")
        name = normalize_table_name(str(model_name), path=self._where.path, line=self._where.line)
        types = self._columns.types(name)
        if types is not None:
            return types
        if not self._columns.final:
            raise ColumnsPending(name)
        if self._columns.known(name):
            raise LookupError(f"the columns of {name} are not known: declare its columns, or name them in its query")
        raise LookupError(f"there is no model or external model {name}")

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"evaluator.{name} is not available: sparkmesh builds an is_sql model's query once, when the project "
            "loads (evaluator.var, evaluator.blueprint_var, evaluator.dialect, evaluator.parse_one and "
            "evaluator.columns_to_types are)"
        )


def time_placeholders() -> dict[str, exp.Expression]:
    """``evaluator.locals``' time values (``start_date``, ``end_ds`` ...), each as its macro variable: SQLMesh renders
    an is_sql function per interval with the interval's values, sparkmesh writes the query once, so a value that
    goes into the query stays ``@start_date`` there and is rendered per interval like a .sql file's."""
    from dagster_sparkmesh.project.rendering import time_macro_values

    epoch = datetime(1970, 1, 1)  # any interval: only the names are used
    names = time_macro_values(epoch, epoch + timedelta(days=1), epoch)
    return {name: exp.Var(this=f"@{name}") for name in names}


def query_of(
    function: Callable[..., Any], where: Where, dialect: str, defaults: ModelDefaults,
    variables: Mapping[str, object], blueprint: Mapping[str, object], columns: ModelColumns | None = None,
    default_catalog: str | None = None,
) -> QueryParts:
    from dagster_sparkmesh.project.sql.model import parse_sql_model

    try:
        returned = function(LoadTimeEvaluator(dialect, variables, blueprint, where, columns))
    except ColumnsPending as pending:
        pending.asking = normalize_table_name(where.model, path=where.path, line=where.line)
        pending.path, pending.line = where.path, _failing_line(pending, where)
        raise
    except Exception as error:  # the user's function: name it, at the line of the model file that failed
        line = _failing_line(error, where)
        raise ProjectError(f"the is_sql function of {where.model} raised {type(error).__name__}: {error}",
                           path=where.path, line=line, snippet=_line_text(where.path, line),
                           hint="it runs when the project loads") from error
    text = _sql_text(returned, where, dialect)
    # The same pipeline as a .sql file: a header naming only the dialect; everything else comes from @model.
    parsed = parse_sql_model(where.path, f"MODEL (name {where.model}, kind FULL, dialect {dialect});\n\n{text}\n",
                             defaults, variables, default_catalog=default_catalog)
    model = parsed.model
    if model.query is None:
        raise where.error("is_sql", "the function returned no query", returned, "return a SELECT")
    return QueryParts(query=model.query, pre_statements=model.pre_statements, post_statements=model.post_statements,
                      references=frozenset(reference.name for reference in parsed.references))


def _failing_line(error: Exception, where: Where) -> int:
    """The deepest line of the model file in the traceback (a call of ``columns_to_types``, say), else the model's."""
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if Path(frame.filename) == where.path]
    return lines[-1] if lines and lines[-1] else where.line


def _line_text(path: Path, line: int) -> str | None:
    try:
        return path.read_text(encoding="utf-8").splitlines()[line - 1].strip() or None
    except (OSError, UnicodeDecodeError, IndexError):
        return None


def _sql_text(returned: object, where: Where, dialect: str) -> str:
    if isinstance(returned, exp.Expression):
        return returned.sql(dialect=dialect)
    if isinstance(returned, str) and returned.strip():
        return returned
    raise where.error("is_sql", f"the function must return SQL text or a sqlglot expression, not {type(returned).__name__}",
                      returned, "return e.g. \"SELECT id FROM db.parent\"")


def project_default_catalog(project_root: Path | None) -> str | None:
    """The catalog the project's names mean when they name none (an is_sql query may name it, as ibis does)."""
    from dagster_sparkmesh.project.config.loader import load_config

    return load_config(project_root).config.default_catalog if project_root is not None else None


def project_variables(project_root: Path | None) -> dict[str, object]:
    """The project's config variables (an is_sql function may read them through ``evaluator.var``)."""
    from dagster_sparkmesh.project.config.loader import load_config

    return dict(load_config(project_root).config.variables) if project_root is not None else {}
