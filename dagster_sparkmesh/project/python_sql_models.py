"""``@model(..., is_sql=True)``: a Python function that returns the model's query (SQLMesh's "Python models
returning SQL").

The function is called once, at load time, with an evaluator that offers ``var``, ``blueprint_var``, ``dialect``
and ``parse_one``; what it returns (SQL text or a sqlglot expression, macros such as ``@start_ds`` included) then
goes through the SQL model pipeline like a ``.sql`` file's query: same parsing, macro handling, canonical form and
table references. So the model is a SQL model whose text a function wrote: its query is what is fingerprinted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.python_model_options import Where


@dataclass(frozen=True)
class QueryParts:
    query: str
    pre_statements: tuple[str, ...]
    post_statements: tuple[str, ...]
    references: frozenset[str]


class LoadTimeEvaluator:
    """What an ``is_sql`` function receives as ``evaluator`` while its model loads."""

    runtime_stage = "loading"

    def __init__(self, dialect: str, variables: Mapping[str, object], blueprint: Mapping[str, object]) -> None:
        self.dialect = dialect
        self.locals: dict[str, object] = {}
        self._variables = variables
        self._blueprint = blueprint

    def var(self, name: str, default: object = None) -> object:
        return self._variables.get(name.lower(), default)

    def blueprint_var(self, name: str, default: object = None) -> object:
        return self._blueprint.get(name.lower(), default)

    def parse_one(self, sql: str) -> exp.Expression:
        return sqlglot.parse_one(sql, dialect=self.dialect)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"evaluator.{name} is not available: sparkmesh builds an is_sql model's query once, when the project "
            "loads (evaluator.var, evaluator.blueprint_var, evaluator.dialect and evaluator.parse_one are)"
        )


def query_of(
    function: Callable[..., Any], where: Where, dialect: str, defaults: ModelDefaults,
    variables: Mapping[str, object], blueprint: Mapping[str, object],
) -> QueryParts:
    from dagster_sparkmesh.project.sql_model import parse_sql_model

    try:
        returned = function(LoadTimeEvaluator(dialect, variables, blueprint))
    except Exception as error:  # the user's function: name it, at the model's line
        raise ProjectError(f"the is_sql function of {where.model} raised {type(error).__name__}: {error}",
                           path=where.path, line=where.line, hint="it runs when the project loads") from error
    text = _sql_text(returned, where, dialect)
    # The same pipeline as a .sql file: a header naming only the dialect; everything else comes from @model.
    parsed = parse_sql_model(where.path, f"MODEL (name {where.model}, kind FULL, dialect {dialect});\n\n{text}\n",
                             defaults, variables)
    model = parsed.model
    if model.query is None:
        raise where.error("is_sql", "the function returned no query", returned, "return a SELECT")
    return QueryParts(query=model.query, pre_statements=model.pre_statements, post_statements=model.post_statements,
                      references=frozenset(reference.name for reference in parsed.references))


def _sql_text(returned: object, where: Where, dialect: str) -> str:
    if isinstance(returned, exp.Expression):
        return returned.sql(dialect=dialect)
    if isinstance(returned, str) and returned.strip():
        return returned
    raise where.error("is_sql", f"the function must return SQL text or a sqlglot expression, not {type(returned).__name__}",
                      returned, "return e.g. \"SELECT id FROM db.parent\"")


def project_variables(project_root: Path | None) -> dict[str, object]:
    """The project's config variables (an is_sql function may read them through ``evaluator.var``)."""
    from dagster_sparkmesh.project.config_loader import load_config

    return dict(load_config(project_root).config.variables) if project_root is not None else {}
