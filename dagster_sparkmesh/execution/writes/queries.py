"""The SQL a write runs for an interval: the model's query (or a Python model's rows) with its pre-statements,
and its post-statements, rendered over the tables the target names."""

from __future__ import annotations

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.model.merge_clauses import MergeRules
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.project.rendering import render_query, render_statements
from dagster_sparkmesh.snapshot.naming import quote_identifier
from dagster_sparkmesh.snapshot.records import Interval


def rendered_query(ctx: ExecutionContext, target: ModelTarget, interval: Interval) -> str:
    """The Spark SQL of a SQL model's query for ``interval``, reading the tables ``target`` names."""
    return render_query(target.model, **_render_context(ctx, target, interval))


def select_for(ctx: ExecutionContext, target: ModelTarget, interval: Interval) -> str:
    """The SELECT that produces the model's rows for the interval (SQL models) or a temp view over a DataFrame.

    The model's pre-statements run first, for the same interval: they prepare the session the query runs in."""
    run_statements(ctx, target, interval, target.model.pre_statements)
    if target.first_query is not None and target.first_query.interval == interval:
        return target.first_query.sql
    if target.model.source != "python":
        return rendered_query(ctx, target, interval)
    from dagster_sparkmesh.execution.python_runner import python_model_select

    return python_model_select(ctx, target.model, interval, target.table_lookup())


def run_statements(ctx: ExecutionContext, target: ModelTarget, interval: Interval, statements: tuple[str, ...]) -> None:
    """Pre/post-statements, rendered like the query (macros, ``@this_model`` = the physical table) and run in order."""
    if not statements:
        return
    for statement in render_statements(target.model, statements, **_render_context(ctx, target, interval)):
        ctx.engine.catalog.execute(statement)


def merge_rules(ctx: ExecutionContext, target: ModelTarget, interval: Interval) -> MergeRules:
    """A unique-key model's ``when_matched`` and its ``merge_filter`` rendered for ``interval`` like its query (SQLMesh
    renders the filter with the write's start, end and execution time)."""
    kind = target.model.kind
    merge_filter = getattr(kind, "merge_filter", None)
    if merge_filter is not None:
        rendered = render_statements(target.model, [merge_filter], **_render_context(ctx, target, interval))
        if len(rendered) != 1:
            raise ProjectError(f"the merge_filter of model {target.model.name} rendered to {len(rendered)} conditions",
                               path=target.model.path, line=target.model.line, snippet=merge_filter,
                               hint="make each macro in merge_filter return one condition (an @IF needs its else)")
        merge_filter = rendered[0]
    return MergeRules(when_matched=getattr(kind, "when_matched", None), merge_filter=merge_filter)


def empty_select(model: Model) -> str:
    """No rows, the model's declared columns: the table a self-referencing model's first interval reads."""
    columns = ", ".join(f"CAST(NULL AS {data_type}) AS {quote_identifier(name)}" for name, data_type in model.columns)
    return f"SELECT {columns} WHERE 1 = 0"


def _render_context(ctx: ExecutionContext, target: ModelTarget, interval: Interval) -> dict:
    """What rendering the model's query or statements for ``interval`` needs (one place for both)."""
    return {
        "start": interval.start,
        "end": interval.end,
        "execution_time": ctx.clock(),
        "table_for": target.table_lookup(),
        "models": ctx.project.models,
        "variables": ctx.project.config.variables,
    }
