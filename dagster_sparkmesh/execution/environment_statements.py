"""``before_all`` / ``after_all``: the project's SQL run once around each plan application (and Dagster step).

Statements may use SQLMesh's macros, with the variables SQLMesh gives these statements: ``@this_env`` (the
environment's name), ``@schemas`` and ``@views`` (the environment's view schemas and views, e.g. for grants).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot.errors import SqlglotError

from dagster_sparkmesh.errors import EngineError, ExecutionError, ProjectError
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.macros import MacroEvaluator, load_user_macros
from dagster_sparkmesh.macros import expansion, syntax
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.snapshot.naming import schema_of, view_name


def run_before_all(ctx: ExecutionContext, plan: Plan | None) -> None:
    _run(ctx, plan, ctx.project.config.before_all, "before_all")


def run_after_all(ctx: ExecutionContext, plan: Plan | None) -> None:
    _run(ctx, plan, ctx.project.config.after_all, "after_all")


def _run(ctx: ExecutionContext, plan: Plan | None, statements: Sequence[str], which: str) -> None:
    if not statements:
        return
    views = _views(ctx, plan)
    evaluator = MacroEvaluator(
        dialect="spark",
        variables=ctx.project.config.variables,
        locals={"this_env": ctx.environment, "views": views, "schemas": sorted({schema_of(v) for v in views})},
        macros=load_user_macros(ctx.project.path).functions,
    )
    for text in statements:
        for statement in _expanded(text, evaluator, which):
            try:
                ctx.engine.catalog.execute(statement)
            except EngineError as error:  # say which config statement it was
                raise ExecutionError(f"{which} statement failed: {error.message}", snippet=statement,
                                     hint=f"fix the statement under {which} in the project's config") from error


def _expanded(text: str, evaluator: MacroEvaluator, which: str) -> list[str]:
    try:
        parsed = expansion.parse(text, "spark", syntax.Source(path=None, text=text))
        return [statement.sql(dialect="spark") for statement in expansion.expand(parsed, evaluator)]
    except ProjectError:
        raise
    except SqlglotError as error:
        raise ProjectError(f"cannot read the {which} statement: {error}", snippet=text,
                           hint="write Spark SQL; macros as in SQLMesh (@this_env, @views, @schemas)") from None


def _views(ctx: ExecutionContext, plan: Plan | None) -> list[str]:
    environment = plan.environment_after if plan is not None else ctx.state.get_environment(ctx.environment)
    if environment is None:
        return []
    return sorted(view_name(s.name, ctx.environment, s.catalog) for s in environment.view_snapshots)
