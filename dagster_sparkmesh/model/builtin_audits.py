"""Built-in audits and the rendering of any audit call into a Spark SQL query that returns the OFFENDING rows.

Each built-in is a function building a sqlglot expression from the audited table and the call's arguments, so
user text is parsed and placed as expressions, never pasted into SQL strings. Every built-in also exists as
``<name>_non_blocking`` (same query, a failure only warns) and takes SQLMesh's ``condition`` (only the rows it holds
for are audited). The audits on values, patterns and statistics are built in ``builtin_audit_queries``. Custom
audits (``audits/*.sql``) are rendered by replacing ``@this_model`` and ``@<param>`` in their parsed query.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.builtin_audit_queries import AUDITS, audited_rows, out_of_range, with_condition
from dagster_sparkmesh.model.records import AuditCall, AuditDefinition, Model
from dagster_sparkmesh.macros.parse_errors import parse_error_description

THIS_MODEL = "this_model"
NON_BLOCKING_SUFFIX = "_non_blocking"


@dataclass(frozen=True)
class _Arguments:
    """An audit call's arguments, parsed to expressions, looked up by name with clear errors."""

    audit: str
    values: Mapping[str, exp.Expression]

    def get(self, name: str) -> exp.Expression:
        if name not in self.values:
            raise ProjectError(
                f"audit {self.audit} needs the argument {name!r}", hint=f"write {self.audit}({name} := ...)"
            )
        return self.values[name].copy()

    def optional(self, name: str) -> exp.Expression | None:
        return self.values[name].copy() if name in self.values else None

    def items(self, name: str) -> list[exp.Expression]:
        """A list argument: ``(a, b)``, ``[a, b]``, ``ARRAY(a, b)`` or a single expression."""
        value = self.get(name)
        if isinstance(value, (exp.Tuple, exp.Array)):
            return list(value.expressions)
        if isinstance(value, exp.Paren):
            return [value.this]
        return [value]


@dataclass(frozen=True)
class _Builtin:
    params: tuple[str, ...]
    build: Callable[[exp.Expression, _Arguments], exp.Query]


def _rows_where(table: exp.Expression, condition: exp.Expression, args: _Arguments) -> exp.Query:
    return exp.select("*").from_(table).where(with_condition(condition, args))


def _not_null(table: exp.Expression, args: _Arguments) -> exp.Query:
    return _rows_where(table, exp.or_(*(exp.Is(this=column, expression=exp.Null()) for column in args.items("columns"))), args)


def _unique_values(table: exp.Expression, args: _Arguments) -> exp.Query:
    # Every copy of a value after the first is offending; one rank column per audited column.
    columns = args.items("columns")
    ranks = [
        exp.alias_(
            exp.Window(
                this=exp.RowNumber(), partition_by=[column.copy()], order=exp.Order(expressions=[exp.Ordered(this=column.copy())])
            ),
            f"_sparkmesh_rank_{index}",
        )
        for index, column in enumerate(columns)
    ]
    ranked = exp.select("*", *ranks).from_(audited_rows(table, args)).subquery("_sparkmesh_ranked")
    offending = exp.or_(*(exp.column(f"_sparkmesh_rank_{index}") > 1 for index in range(len(columns))))
    return exp.select("*").from_(ranked).where(offending)


def _accepted_values(table: exp.Expression, args: _Arguments) -> exp.Query:
    return _rows_where(table, exp.not_(exp.In(this=args.get("column"), expressions=args.items("is_in"))), args)


def _not_accepted_values(table: exp.Expression, args: _Arguments) -> exp.Query:
    return _rows_where(table, exp.In(this=args.get("column"), expressions=args.items("is_in")), args)


def _number_of_rows(table: exp.Expression, args: _Arguments) -> exp.Query:
    count = exp.Count(this=exp.Star())
    # Offending unless the rows outnumber the threshold, as SQLMesh's (``COUNT(*) <= threshold``).
    threshold = exp.LTE(this=count.copy(), expression=args.get("threshold"))
    return exp.select(exp.alias_(count, "row_count")).from_(audited_rows(table, args)).having(threshold)


def _forall(table: exp.Expression, args: _Arguments) -> exp.Query:
    return _rows_where(table, exp.or_(*(exp.not_(exp.paren(criterion)) for criterion in args.items("criteria"))), args)


def _accepted_range(table: exp.Expression, args: _Arguments) -> exp.Query:
    return _rows_where(table, out_of_range(args.get("column"), args, "accepted_range(column := x, min_v := 0)"), args)


def _at_least_one(table: exp.Expression, args: _Arguments) -> exp.Query:
    # Rows, none with a value. An empty table passes, as in SQLMesh (whose query groups the rows: none, no group).
    count = exp.Count(this=args.get("column"))
    none = exp.and_(
        exp.EQ(this=count.copy(), expression=exp.Literal.number(0)),
        exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(0)),
    )
    return exp.select(exp.alias_(count, "non_null_count")).from_(audited_rows(table, args)).having(none)


def _unique_combination_of_columns(table: exp.Expression, args: _Arguments) -> exp.Query:
    columns = args.items("columns")
    count = exp.Count(this=exp.Star())
    return (
        exp.select(*(column.copy() for column in columns), exp.alias_(count, "duplicate_count"))
        .from_(audited_rows(table, args))
        .group_by(*columns)
        .having(exp.GT(this=count.copy(), expression=exp.Literal.number(1)))
    )


BUILTIN_AUDITS: dict[str, _Builtin] = {
    "not_null": _Builtin(("columns", "condition"), _not_null),
    "unique_values": _Builtin(("columns", "condition"), _unique_values),
    "accepted_values": _Builtin(("column", "is_in", "condition"), _accepted_values),
    "not_accepted_values": _Builtin(("column", "is_in", "condition"), _not_accepted_values),
    "number_of_rows": _Builtin(("threshold", "condition"), _number_of_rows),
    "forall": _Builtin(("criteria", "condition"), _forall),
    "accepted_range": _Builtin(("column", "min_v", "max_v", "inclusive", "condition"), _accepted_range),
    "at_least_one": _Builtin(("column", "condition"), _at_least_one),
    "unique_combination_of_columns": _Builtin(("columns", "condition"), _unique_combination_of_columns),
    **{name: _Builtin(params, build) for name, (params, build) in AUDITS.items()},
}


def audit_names(custom: Mapping[str, AuditDefinition] = {}) -> list[str]:
    """Every name an audit call may use (built-ins with their non-blocking twins, then custom audits)."""
    names = [name for builtin in BUILTIN_AUDITS for name in (builtin, builtin + NON_BLOCKING_SUFFIX)]
    return names + [name for name in custom for name in (name, name + NON_BLOCKING_SUFFIX)]


def check_audit_names(
    models: Iterable[Model], custom: Mapping[str, AuditDefinition],
    own: Mapping[str, Mapping[str, AuditDefinition]] = {},
) -> None:
    """Every audit a model calls exists (a built-in, an audit of the project or of the model's own file, ``own``): a
    typo is a load-time error, not an audit that never runs or fails only once the model is computed."""
    project_known = set(audit_names(custom))
    for model in models:
        known = project_known | set(audit_names(own.get(model.name, {})))
        for call in model.audits:
            if call.name in known:
                continue
            near = difflib.get_close_matches(call.name, sorted(known), n=3)
            raise ProjectError(
                f"model {model.name} calls unknown audit {call.name!r}",
                path=model.path,
                line=model.line,
                snippet=call.name,
                hint=(f"did you mean {', '.join(near)}? " if near else "")
                + "define it in audits/*.sql (or inline with AUDIT (...)), or use a built-in audit",
            )


def render_audit_query(
    call: AuditCall, table_sql: str, custom: Mapping[str, AuditDefinition], model_name: str | None = None,
    table_for: Callable[[str], str] | None = None, time_values: Mapping[str, exp.Expression] | None = None,
) -> str:
    """Spark SQL selecting the rows of ``table_sql`` (a quoted table name or a parenthesized query) that fail.
    ``model_name``: the audited model; a custom audit naming it (``FROM db.orders``, as SQLMesh allows) reads
    ``table_sql`` there too: the version being audited, not the one the environment's view serves.
    ``table_for``: model name → the table of the version the audited one reads (its parents'), for a custom audit
    that names another model, as SQLMesh renders it (not the view of whatever environment is promoted).
    ``time_values``: the time macros of the audited interval (``@start_ds``, ``@execution_dt`` ...), which a custom
    audit may use as SQLMesh's do; its defaults and arguments of the same name win."""
    table = _parse(f"SELECT * FROM {table_sql}", what="audited table").find(exp.From).this
    definition = custom.get(call.name) or custom.get(call.base_name)
    if definition is not None:
        return _render_custom(call, definition, table, model_name, table_for, time_values or {})
    builtin = BUILTIN_AUDITS.get(call.base_name)
    if builtin is None:
        near = difflib.get_close_matches(call.name, audit_names(custom), n=3)
        raise ProjectError(
            f"unknown audit {call.name!r}",
            snippet=call.name,
            hint=(f"did you mean {', '.join(near)}? " if near else "")
            + "built-in audits: "
            + ", ".join(BUILTIN_AUDITS)
            + "; custom audits live in audits/*.sql",
        )
    args = _arguments(call, builtin.params)
    return builtin.build(table, args).sql(dialect="spark")


def _arguments(call: AuditCall, params: tuple[str, ...]) -> _Arguments:
    values = {}
    for name, text in call.args:
        if name not in params:
            raise ProjectError(
                f"audit {call.name} has no argument {name!r}", snippet=name, hint=f"its arguments are: {', '.join(params)}"
            )
        values[name] = _parse(text, what=f"argument {name} of audit {call.name}")
    return _Arguments(call.name, values)


def _render_custom(
    call: AuditCall, definition: AuditDefinition, table: exp.Expression, model_name: str | None,
    table_for: Callable[[str], str] | None, time_values: Mapping[str, exp.Expression],
) -> str:
    values = {name: value.copy() for name, value in time_values.items()}
    values.update({name: _parse(text, what=f"default {name} of audit {definition.name}") for name, text in definition.defaults})
    values.update({name: _parse(text, what=f"argument {name} of audit {call.name}") for name, text in call.args})
    query = _expand_macros(definition, values) or _parse(definition.query, what=f"query of audit {definition.name}", path=definition)

    def substitute(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Table) and (
            (isinstance(node.this, exp.Parameter) and node.this.name == THIS_MODEL) or _names(node, model_name)
        ):
            replacement = table.copy()
            if node.args.get("alias"):
                replacement.set("alias", node.args["alias"].copy())
            return replacement
        if isinstance(node, exp.Table) and table_for is not None and isinstance(node.this, exp.Identifier):
            return _other_model(node, table_for)
        if isinstance(node, exp.In) and isinstance(node.args.get("field"), exp.Parameter):
            # ``x IN @values`` with a list argument becomes ``x IN (a, b)``.
            items = _Arguments(call.name, {"v": _value(node.args["field"], values, call, definition)}).items("v")
            # The replacement is not walked again: the left side's own placeholders (``@column IN @values``) are
            # substituted here.
            return exp.In(this=node.this.transform(substitute), expressions=items)
        if isinstance(node, exp.Parameter):
            return _value(node, values, call, definition)
        return node

    rendered = query.transform(substitute)
    left = next(rendered.find_all(exp.Parameter), None)
    if left is not None:  # Spark would read it as a variable of its own (`${x}`): never run such a query
        raise ProjectError(f"audit {call.name}: @{left.name} is left in its query after substitution",
                           path=definition.path, hint="write the argument where the audit's query can use it")
    return rendered.sql(dialect="spark")


def _other_model(node: exp.Table, table_for: Callable[[str], str]) -> exp.Expression:
    """A table the audit names, read from the physical table ``table_for`` gives (under the name it was written
    with, so that its columns keep their qualifier)."""
    written = ".".join(part.name for part in node.parts).lower()
    physical = table_for(written)
    if physical == written:
        return node
    replacement = exp.to_table(physical, dialect="spark")
    replacement.set("alias", node.args["alias"].copy() if node.args.get("alias") else exp.TableAlias(this=exp.to_identifier(node.name)))
    return replacement


def _names(table: exp.Table, model_name: str | None) -> bool:
    if model_name is None or not isinstance(table.this, exp.Identifier):
        return False
    written = ".".join(part.name for part in table.parts).lower()
    return written == model_name.lower()


def _expand_macros(definition: AuditDefinition, values: Mapping[str, exp.Expression]) -> exp.Expression | None:
    """An audit query using macro calls (``@EACH(@columns, c -> ...)``), expanded with the call's arguments as
    macro variables; None when it uses none (plain ``@param`` placeholders are substituted below)."""
    from dagster_sparkmesh.macros import expansion, syntax
    from dagster_sparkmesh.macros.evaluator import MacroEvaluator
    from dagster_sparkmesh.macros.project_macros import user_macros_for

    if not syntax.DEFERRED_CALL.search(definition.query) and "@{" not in definition.query:
        return None
    source = syntax.Source(definition.path, 1, definition.query)
    evaluator = MacroEvaluator(dialect="spark", locals=values, macros=user_macros_for(definition.path),
                               deferred=frozenset({THIS_MODEL}), source=source)
    (query,) = expansion.expand(expansion.parse(definition.query, "spark", source), evaluator)
    # ``@this_model`` stays a placeholder: the parameter form the substitution below replaces by the table.
    return query.transform(
        lambda node: exp.Parameter(this=exp.Var(this=node.name[1:])) if isinstance(node, exp.Var) and node.name.startswith("@") else node
    )


def _value(
    parameter: exp.Expression, values: Mapping[str, exp.Expression], call: AuditCall, definition: AuditDefinition
) -> exp.Expression:
    name = parameter.name.lower()
    if name not in values:
        raise ProjectError(
            f"audit {call.name} has no value for @{name}",
            path=definition.path,
            snippet=f"@{name}",
            hint=f"pass it: {call.name}({name} := ...), or add it to the audit's defaults",
        )
    return values[name].copy()


def _parse(text: str, *, what: str, path: AuditDefinition | None = None) -> exp.Expression:
    try:
        expressions = [expression for expression in sqlglot.parse(text, dialect="spark") if expression is not None]
    except ParseError as error:
        raise ProjectError(
            f"cannot parse {what}: {parse_error_description(error)}", path=path.path if path else None, snippet=text, hint="write Spark SQL"
        ) from error
    if len(expressions) != 1:
        # One expression only: an argument must never smuggle in a second statement.
        raise ProjectError(
            f"{what} must be a single SQL expression", path=path.path if path else None, snippet=text, hint="remove the ';'"
        )
    return expressions[0]
