"""Rendering: the exact Spark SQL a model runs for one interval ``[start, end)``.

Pure and AST-based: the canonical query is parsed (spark dialect), macro placeholders become literals with
SQLMesh's meaning, table references become quoted physical tables (or the real table of an external model), EMBEDDED
models are inlined as subqueries, and the tree is generated back with ``.sql(dialect="spark")``.

Which physical table a model reads is decided by the caller through ``table_for`` (see ``physical_tables``):
rendering knows nothing of versions or of the state store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlglot import exp
from sqlglot.errors import ParseError

from dagster_sparkmesh.clock import to_naive_utc
from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.macros import expansion, syntax
from dagster_sparkmesh.macros.evaluator import MacroEvaluator
from dagster_sparkmesh.macros.project_macros import user_macros_for
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.project import macros
from dagster_sparkmesh.project.query_tables import (alias_keeping, anchor_file_read, qualified_reference, quoted_table, renamed,
                                                    spark_file_read, unqualify_columns)
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.macros.parse_errors import parse_error_description

TableFor = Callable[[str], "str | None"] | Mapping[str, str]
Variables = Mapping[str, "str | int | float | bool"]

_EPOCH = datetime(1970, 1, 1)


def render_query(
    model: Model,
    *,
    start: datetime,
    end: datetime,
    execution_time: datetime,
    table_for: TableFor,
    models: Mapping[str, Model] | None = None,
    variables: Variables | None = None,
) -> str:
    """The Spark SQL of ``model``'s query for the half-open interval ``[start, end)``.

    ``table_for(name)`` gives the table to read for a model or external model name (``schema.table``); a callable
    may return None for names it does not manage, which are then left as written. ``models`` lets EMBEDDED models
    be inlined and lets references to models without a table be reported instead of silently kept.
    """
    if model.query is None:
        raise ProjectError(
            f"model {model.name} has no SQL query to render ({model.source} model)",
            path=model.path,
            line=model.line,
            hint="only SQL models can be rendered",
        )
    context = _Context.build(model, start, end, execution_time, table_for, models, variables)
    return _generate(_render_model(model, context, stack=()), model.query, model)


def render_statements(
    model: Model,
    statements: Sequence[str],
    *,
    start: datetime,
    end: datetime,
    execution_time: datetime,
    table_for: TableFor,
    models: Mapping[str, Model] | None = None,
    variables: Variables | None = None,
) -> list[str]:
    """Render pre/post statements of ``model`` (e.g. ``model.pre_statements``) like its query."""
    context = _Context.build(model, start, end, execution_time, table_for, models, variables)
    rendered = []
    for text in statements:
        parsed = _parse_all(text, model, context)
        if not parsed:  # a macro call that returned None (a check, say) leaves nothing to run, as in SQLMesh
            continue
        rendered.append(_generate(_finish(_single(parsed, model, text), model, context, stack=()), text, model))
    return rendered


def physical_tables(
    models: Mapping[str, Model],
    external_names: Iterable[str],
    version_for: Callable[[Model], str],
) -> Callable[[str], str | None]:
    """A ``table_for`` that reads models from their physical tables and externals from their own tables.

    ``version_for`` decides the physical table: the version of the snapshot an environment points at, or, before
    any plan, the version a new snapshot would get (``plan.versions.new_version``).
    """
    externals = frozenset(external_names)

    def table_for(name: str) -> str | None:
        model = models.get(name)
        if model is not None and model.kind.has_physical_layer:
            return physical_table(name, version_for(model), model.catalog)
        if name in externals or (model is not None and model.kind.external):
            return name
        return None

    return table_for


def time_macro_values(start: datetime, end: datetime, execution_time: datetime) -> dict[str, exp.Expression]:
    """SQLMesh's time macros for naive UTC times: ``end`` is exclusive, the ``@end_*`` macros name the last
    included instant (``end`` minus one microsecond). ``_dt`` literals are read in the Spark session time zone,
    which the engine keeps at UTC."""
    values: dict[str, exp.Expression] = {}
    for prefix, moment in (
        ("start", start),
        ("end", end - timedelta(microseconds=1)),
        ("execution", execution_time),
    ):
        values.update(_moment_values(prefix, moment))
    return values


def _moment_values(prefix: str, moment: datetime) -> dict[str, exp.Expression]:
    ds = moment.strftime("%Y-%m-%d")
    ts = moment.isoformat(sep=" ")
    # Millisecond precision with integer arithmetic, as SQLMesh (floats would round 23:59:59.999999 up).
    millis = (moment - _EPOCH) // timedelta(milliseconds=1)
    return {
        f"{prefix}_ds": exp.Literal.string(ds),
        f"{prefix}_date": exp.cast(exp.Literal.string(ds), exp.DataType.Type.DATE),
        f"{prefix}_ts": exp.Literal.string(ts),
        f"{prefix}_dt": exp.cast(exp.Literal.string(ts), exp.DataType.Type.TIMESTAMP),
        f"{prefix}_epoch": exp.Literal.number(millis / 1000),
        f"{prefix}_millis": exp.Literal.number(millis),
    }


@dataclass(frozen=True)
class _Context:
    macro_values: Mapping[str, exp.Expression]
    resolve: Callable[[str], str | None]
    models: Mapping[str, Model]
    variables: Variables
    user_macros: Mapping[str, Callable[..., object]] | None = None

    @classmethod
    def build(
        cls,
        model: Model,
        start: datetime,
        end: datetime,
        execution_time: datetime,
        table_for: TableFor,
        models: Mapping[str, Model] | None,
        variables: Variables | None,
    ) -> _Context:
        start, end, execution_time = to_naive_utc(start), to_naive_utc(end), to_naive_utc(execution_time)
        if end <= start:
            raise ProjectError(
                f"cannot render model {model.name} for an empty interval: end {end} is not after start {start}",
                path=model.path,
                line=model.line,
                hint="the interval is [start, end): pass an end after the start",
            )
        resolve = table_for.get if isinstance(table_for, Mapping) else table_for
        values = time_macro_values(start, end, execution_time)
        return cls(values, resolve, models or {}, variables or {})


def _render_model(model: Model, context: _Context, stack: tuple[str, ...]) -> exp.Expression:
    if model.name in stack:
        cycle = " -> ".join((*stack, model.name))
        raise ProjectError(f"embedded models form a cycle: {cycle}", path=model.path, line=model.line)
    return _render_sql(model.query or "", model, context, (*stack, model.name))


def _render_sql(text: str, model: Model, context: _Context, stack: tuple[str, ...]) -> exp.Expression:
    return _finish(_parse(text, model, context), model, context, stack)


def _finish(expression: exp.Expression, model: Model, context: _Context, stack: tuple[str, ...]) -> exp.Expression:
    # Tables first: ``@this_model`` turns into a physical table that must not be resolved again.
    expression = _replace_tables(expression, model, context, stack)
    return _substitute_macros(expression, model, context)


def _parse(text: str, model: Model, context: _Context) -> exp.Expression:
    """The stored text parsed, with the macros that waited for an interval expanded now (``@this_model`` is left
    to ``_substitute_macros``: it must become a physical table after the other tables are replaced)."""
    return _single(_parse_all(text, model, context), model, text)


def _single(statements: list[exp.Expression], model: Model, text: str) -> exp.Expression:
    if len(statements) != 1:
        raise ProjectError(
            f"a statement of model {model.name} expanded to {len(statements)} statements",
            path=model.path,
            line=model.line,
            snippet=text,
            hint="a macro at the top of a query or statement must produce exactly one statement",
        )
    return statements[0]


def _parse_all(text: str, model: Model, context: _Context) -> list[exp.Expression]:
    evaluator = _render_evaluator(model, context, text)
    try:
        statements = expansion.expand(expansion.parse(text, "spark", evaluator.source), evaluator)
    except ParseError as error:
        raise ProjectError(
            f"cannot parse the SQL of model {model.name}: {parse_error_description(error)}",
            path=model.path,
            line=model.line,
            snippet=text,
            hint="the stored query should be canonical Spark SQL; run `sparkmesh clean` and reload the project",
        ) from error
    _refuse_unexpanded(statements, model, text)
    return statements


def _refuse_unexpanded(statements: list[exp.Expression], model: Model, text: str) -> None:
    """A macro still waiting after rendering had every value (``@STAR`` of a relation without declared columns)
    would reach Spark as text: say which and why instead."""
    for statement in statements:
        for call in statement.find_all(exp.Anonymous):
            if isinstance(call.this, str) and call.this.startswith("@"):
                raise ProjectError(
                    f"macro {call.this} of model {model.name} cannot be evaluated: {call.sql(dialect='spark')}",
                    path=model.path,
                    line=model.line,
                    snippet=text,
                    hint="@STAR and @UNION need the relation's columns: declare columns (...) in its MODEL header",
                )


def _render_evaluator(model: Model, context: _Context, text: str) -> MacroEvaluator:
    values = {name: _python_value(value) for name, value in context.macro_values.items()}
    this_table = context.resolve(model.name) if not model.kind.inlined else None
    user_macros = context.user_macros
    if user_macros is None and syntax.DEFERRED_CALL.search(text):
        user_macros = user_macros_for(model.path)  # a user macro waited for the interval: its project's macros
    return MacroEvaluator(
        dialect="spark",
        variables=context.variables,
        locals={**values, "runtime_stage": "evaluating"},
        macros=user_macros or {},
        deferred=frozenset({"this_model"}),
        source=syntax.Source(model.path, 1),
        this_model=this_table,
        runtime_stage="evaluating",
        columns_to_types=lambda name: _columns(context.models, name),
    )


def _python_value(value: exp.Expression) -> object:
    """Time values as SQLMesh gives them to macros: strings and numbers; typed ones (``_date``, ``_dt``) as SQL."""
    if isinstance(value, exp.Literal):
        return value.this if value.is_string else (int(value.this) if value.this.lstrip("-").isdigit() else float(value.this))
    return value


def _columns(models: Mapping[str, Model], name: str) -> dict[str, str] | None:
    """A model's declared columns, else the ones sqlglot derives from its query (as SQLMesh infers them for
    ``@UNION`` and ``@STAR``); None where any type is unknown: a cast to an unknown type is no query."""
    model = models.get(name.lower())
    if model is None:
        return None
    if model.columns:
        return dict(model.columns)
    from dagster_sparkmesh.project.column_schema import ModelColumns  # only a macro asking for columns needs it

    derived = ModelColumns(models, {}, final=True).types(model.name)
    if not derived or any(data_type.this == exp.DataType.Type.UNKNOWN for data_type in derived.values()):
        return None
    return {column: data_type.sql(dialect="spark") for column, data_type in derived.items()}


def _macro_name(node: exp.Expression) -> str | None:
    """``@name`` placeholders the macro evaluator leaves (``@this_model``) or Spark's own ``${name}`` parameter."""
    if isinstance(node, exp.Var) and node.name.startswith("@"):
        return node.name[1:].lower()
    if isinstance(node, exp.Parameter):
        return node.name.lower()
    return None


def _substitute_macros(expression: exp.Expression, model: Model, context: _Context) -> exp.Expression:
    def substitute(node: exp.Expression) -> exp.Expression:
        name = _macro_name(node)
        if name is None:
            return node
        if name == "this_model":
            return quoted_table(_this_model_table(model, context))
        if name in context.macro_values:
            return context.macro_values[name].copy()
        if name in context.variables:
            return macros.variable_literal(context.variables[name])
        raise ProjectError(
            f"unknown macro variable @{name} in model {model.name}",
            path=model.path,
            line=model.line,
            hint=f"use one of: {', '.join(sorted(macros.BUILTIN_MACROS))}, or define it under 'variables'",
        )

    expression = expression.transform(substitute, copy=False)
    # ``FROM @this_model`` becomes a table nested in a table: flatten it, keeping the alias.
    for table in list(expression.find_all(exp.Table)):
        if isinstance(table.this, exp.Table):
            inner = table.this
            inner.set("alias", table.args.get("alias"))
            table.replace(inner)
    return expression


def _this_model_table(model: Model, context: _Context) -> str:
    table = context.resolve(model.name)
    if table is None:
        raise ProjectError(
            f"@this_model has no table in model {model.name} ({model.kind_name})",
            path=model.path,
            line=model.line,
            hint="@this_model refers to the model's own physical table; EMBEDDED models have none",
        )
    return table


def _replace_tables(
    expression: exp.Expression, model: Model, context: _Context, stack: tuple[str, ...]
) -> exp.Expression:
    replaced: set[tuple[str, str]] = set()
    for table in list(expression.find_all(exp.Table)):
        anchor_file_read(table, model.root)
        file_read = spark_file_read(table, model.root)
        if file_read is not None:
            table.replace(file_read)
            continue
        name = qualified_reference(table)
        if name is None:
            continue
        replacement = _replacement(table, name, model, context, stack)
        if replacement is not None:
            table.replace(replacement)
            replaced.add((table.db.lower(), table.name.lower()))
    unqualify_columns(expression, replaced)
    return expression


def _replacement(
    table: exp.Table, name: str, model: Model, context: _Context, stack: tuple[str, ...]
) -> exp.Expression | None:
    alias = table.args.get("alias")
    if alias is None and isinstance(table.parent, (exp.From, exp.Join)):
        # The original name stays usable as a qualifier (``orders.id``); DDL targets take no alias.
        alias = alias_keeping(table.name)
    referenced = context.models.get(name)
    if referenced is not None and referenced.kind.inlined:
        inlined = _render_model(referenced, context, stack)
        return exp.Subquery(this=inlined, alias=alias or alias_keeping(table.name))
    target = context.resolve(name)
    if target is None:
        if referenced is not None:
            raise ProjectError(
                f"model {model.name} reads {name}, which has no table to read",
                path=model.path,
                line=model.line,
                hint=f"{name} is a {referenced.kind_name} model; its table must be known to render this query",
            )
        return None
    return renamed(table, target, alias)


def _generate(expression: exp.Expression, text: str, model: Model) -> str:
    """Spark SQL of the rendered tree; a macro sqlglot kept as raw text (a ``Command``) is refused, not guessed."""
    sql = expression.sql(dialect="spark")
    if syntax.LEFTOVER.search(sql):
        raise ProjectError(
            f"cannot substitute the macro variables of a statement of model {model.name}",
            path=model.path,
            line=model.line,
            snippet=text,
            hint="Spark SQL that sqlglot cannot parse is kept as raw text; write the statement without macros",
        )
    return sql
