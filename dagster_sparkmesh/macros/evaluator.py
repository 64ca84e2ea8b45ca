"""The macro evaluator: walks a parsed statement and replaces every macro with the SQL it stands for.

Arguments are expanded before a macro runs (lambdas are not: they are applied by the operator), a macro's result
is expanded again (a macro may return macros), and a list result is spliced into the list that held the call
(``SELECT @EACH(...)``). A macro that needs a value only an interval has (``@start_ds``, ``@this_model``) raises
``Deferred``: the call is kept, as ``@NAME(...)``, with its arguments expanded, and runs again at render time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import sqlglot
from sqlglot import exp

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.user_exit import ExitCalled, exit_error, exits_refused
from dagster_sparkmesh.macros import clauses, nodes, syntax, values
from dagster_sparkmesh.macros.evaluation import evaluate
from dagster_sparkmesh.macros.syntax import Source

MAX_DEPTH = 64
"""Nested macro calls deeper than this are a macro that keeps returning itself."""


class Deferred(Exception):
    """The macro reads a value that only rendering for an interval provides."""


class _Locals(dict):
    """``evaluator.locals``: reading a deferred name (``start_ds`` while loading) defers the macro."""

    def __init__(self, values_: Mapping[str, Any], deferred: frozenset[str]) -> None:
        super().__init__(values_)
        self.deferred = deferred

    def __missing__(self, key: str) -> Any:
        if key.lower() in self.deferred:
            raise Deferred(key)
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key in self:
            return self[key]
        if key.lower() in self.deferred:
            raise Deferred(key)
        return default


class MacroEvaluator:
    """What a macro function receives as its first argument (SQLMesh's ``evaluator``)."""

    def __init__(
        self,
        *,
        dialect: str = "spark",
        variables: Mapping[str, Any] | None = None,
        locals: Mapping[str, Any] | None = None,  # noqa: A002 - SQLMesh's name for it
        macros: Mapping[str, Callable[..., Any]] | None = None,
        deferred: frozenset[str] = frozenset(),
        source: Source | None = None,
        this_model: str | None = None,
        gateway: str | None = None,
        blueprint_variables: Mapping[str, Any] | None = None,
        runtime_stage: str | None = None,
        columns_to_types: Callable[[str], Mapping[str, Any] | None] | None = None,
    ) -> None:
        from dagster_sparkmesh.macros.builtins import BUILTINS

        self.dialect = dialect
        self.variables = {key.lower(): value for key, value in (variables or {}).items()}
        self.deferred = deferred
        self.locals = _Locals({key.lower(): value for key, value in (locals or {}).items()}, deferred)
        self.macros = {**BUILTINS, **{name.lower(): fn for name, fn in (macros or {}).items()}}
        self.source = source or Source(None)
        self._this_model = this_model
        self.gateway = gateway
        self.blueprint_variables = {k.lower(): v for k, v in (blueprint_variables or {}).items()}
        self._runtime_stage = runtime_stage
        self._columns_to_types = columns_to_types
        self._depth = 0
        self._paths: set[int] = set()

    # -- the API user macros see (SQLMesh's names) --------------------------------------------------------------

    @property
    def this_model(self) -> str:
        if self._this_model is None:
            raise Deferred("this_model")
        return self._this_model

    @property
    def runtime_stage(self) -> str:
        if self._runtime_stage is None:
            raise Deferred("runtime_stage")
        return self._runtime_stage

    def var(self, name: str, default: Any = None) -> Any:
        return self.variables.get(str(name).lower(), default)

    def blueprint_var(self, name: str, default: Any = None) -> Any:
        return self.blueprint_variables.get(str(name).lower(), default)

    def columns_to_types(self, name: str) -> Mapping[str, Any]:
        columns = self._columns_to_types(str(name)) if self._columns_to_types else None
        if columns is None:
            raise Deferred(f"columns of {name}")
        return columns

    def parse_one(self, sql: str, **kwargs: Any) -> exp.Expression:
        return sqlglot.parse_one(syntax.prepare(sql, self.source), dialect=self.dialect, **kwargs)

    def eval_expression(self, node: Any) -> Any:
        """A literal-valued expression as its Python value (``@EVAL``'s engine)."""
        if not isinstance(node, exp.Expression):
            return node
        return values.python_value(evaluate(self._single(self.expand(node.copy()), node)))

    def transform(self, expression: exp.Expression) -> exp.Expression | list[exp.Expression] | None:
        return self.expand(expression)

    def evaluate(self, node: exp.Expression) -> Any:
        return self.expand(node)

    # -- expansion ------------------------------------------------------------------------------------------------

    def expand(self, node: exp.Expression) -> values.Returned:
        """``node`` with its macros replaced, in place where possible; a list or None when a macro says so."""
        self._mark_paths(node)
        return self._expand(node)

    def _mark_paths(self, root: exp.Expression) -> None:
        """Remember the nodes on a path from ``root`` down to a macro: expansion descends only there, so a query
        without macros costs one (iterative) walk, and a deeply nested one (``a + a + ... + a``) never recurses."""
        for node in root.walk():
            if type(node._meta) is dict:  # checked here: a call per node costs a tenth of a cold macro load
                nodes.cheap_to_copy(node)
            if not isinstance(node, nodes.MACRO_NODE_TYPES) or not nodes.is_macro(node):
                continue
            # Up to the root every time: an id already in the set may belong to a node that no longer exists.
            while node is not None:
                self._paths.add(id(node))
                if node is root:
                    break
                node = node.parent

    def _expand(self, node: exp.Expression) -> values.Returned:
        if isinstance(node, exp.Anonymous) and isinstance(node.this, str):
            name = syntax.name_of(node.this, syntax.CALL)
            if name is not None:
                return self._call(node, name)
        variable = nodes.variable_name(node)
        if variable is not None:
            return self._variable(node, variable)
        if isinstance(node, exp.Lambda):
            return node  # applied by the operator that receives it, never expanded on its own
        self._expand_children(node)
        if isinstance(node, exp.Identifier) and syntax.INTERPOLATION.search(node.name):
            return self._interpolate(node)
        quoted = nodes.quoted_variable(node)
        if quoted is not None and self._value_of(quoted) is not None:
            return exp.to_identifier(nodes.text_of(self._value_of(quoted)), quoted=True)
        return clauses.resolve(self, node)

    def _expand_children(self, node: exp.Expression) -> None:
        # ``node.set`` only where something changed: it re-links parents, and most nodes hold no macro.
        for key, value in list(node.args.items()):
            if isinstance(value, list):
                expanded: list[Any] = []
                changed = False
                for child in value:
                    if isinstance(child, exp.Expression) and id(child) in self._paths:
                        result = self._expand(child)
                        changed = changed or result is not child
                        expanded.extend(nodes.as_list(result))
                    else:
                        expanded.append(child)
                if changed:
                    node.set(key, expanded)
            elif isinstance(value, exp.Expression) and id(value) in self._paths:
                result = self._expand(value)
                if isinstance(result, list):
                    result = nodes.join_list(result, value)
                if result is None and node.arg_types.get(key):
                    raise self._none_where_required(node, value)
                if result is not value:
                    node.set(key, result)

    def _none_where_required(self, parent: exp.Expression, call: exp.Expression) -> ProjectError:
        """None removes an optional part (a WHERE clause); where the SQL needs a value it would silently become
        another query (``@m() AS x`` read as ``x``)."""
        name = syntax.name_of(call.this, syntax.CALL) if isinstance(call, exp.Anonymous) and isinstance(call.this, str) else None
        what = f"macro @{name}" if name else "a macro"
        return self.error(f"{what} returned None where the SQL needs a value (in {parent.key.upper()} {parent.sql(dialect=self.dialect)[:60]})",
                          call, "return an expression (exp.Null() for NULL), or remove the call", macro=name)

    def _variable(self, node: exp.Expression, name: str) -> values.Returned:
        value = self._value_of(name)
        if value is None:
            if name in self.deferred:
                return nodes.placeholder(node, name)
            raise self.error(f"unknown macro variable @{name}", node,
                             f"define it with @DEF({name}, ...), under 'variables' in config.yaml, or use @VAR('{name}', default)",
                             macro=name)
        if isinstance(node, exp.Table):
            return nodes.as_table(value, node)
        if isinstance(node, exp.Identifier):
            return exp.to_identifier(nodes.text_of(value), quoted=node.args.get("quoted"))
        return value.copy() if isinstance(value, exp.Expression) else value

    def _value_of(self, name: str) -> exp.Expression | list[exp.Expression] | None:
        if name in self.locals:
            value = self.locals[name]
        elif name in self.variables:
            value = self.variables[name]
        elif name in self.blueprint_variables:
            value = self.blueprint_variables[name]
        else:
            return None
        if isinstance(value, list) and value and all(isinstance(item, exp.Expression) for item in value):
            return exp.Array(expressions=[item.copy() for item in value])
        return values.literal(value)

    def _interpolate(self, identifier: exp.Identifier) -> exp.Expression:
        def replace(match: Any) -> str:
            name = match.group(1).lower()
            value = self._value_of(name)
            if value is None:
                if name in self.deferred:
                    return match.group(0)  # stays a sentinel until rendering
                raise self.error(f"unknown macro variable @{{{name}}}", identifier, f"define {name} with @DEF or in 'variables'")
            return nodes.text_of(value)

        text = syntax.INTERPOLATION.sub(replace, identifier.name)
        return exp.to_identifier(text, quoted=identifier.args.get("quoted"))

    def _call(self, node: exp.Anonymous, name: str) -> values.Returned:
        if name == "def":
            return self._define(node)
        if node.this.lower() == syntax.ALIAS:
            body, alias = (nodes.as_array(self._argument(arg)) for arg in node.expressions)
            return exp.alias_(body, exp.to_identifier(nodes.text_of(alias)), copy=False)  # the body is ours
        args, kwargs = self._arguments(node)
        if any(nodes.is_deferred(arg) for arg in [*args, *kwargs.values()] if not isinstance(arg, exp.Lambda)):
            return nodes.deferred_call(node, args, kwargs)
        local = self.locals.get(name) if name not in self.deferred else None
        if isinstance(local, exp.Lambda):
            return self.apply(local, *(nodes.as_array(arg) for arg in args))
        function = self.macros.get(name)
        if function is None:
            raise self.error(f"unknown macro @{name}", node,
                             "define it with @macro() in a file under macros/, or with @DEF for a lambda", macro=name)
        with self._nested(node, name):
            try:
                result = _call_function(self, function, args, kwargs)
            except Deferred:
                return nodes.deferred_call(node, args, kwargs)
            except (SystemExit, ExitCalled) as error:
                raise exit_error(error, f"macro @{name}") from None
            except ProjectError:
                raise
            except Exception as error:  # a user macro's bug is the user's to fix: say which macro and where
                raise self.error(f"macro @{name} raised {type(error).__name__}: {error}", node,
                                 f"fix the macro @{name} or the arguments it is called with", macro=name) from error
            try:
                expanded = values.returned(result, self.parse_one)
            except (values.NotSql, sqlglot.errors.ParseError) as error:
                raise self.error(f"macro @{name} returned {result!r}, which is not SQL ({error})", node,
                                 "return a sqlglot expression, a SQL string, a number, a list of those, or None",
                                 macro=name) from None
            return self._expand_result(expanded)

    def _expand_result(self, result: values.Returned) -> values.Returned:
        if result is None:
            return None
        if isinstance(result, list):
            return [item for part in result for item in nodes.as_list(self.expand(part))]
        return self.expand(result)

    def _arguments(self, node: exp.Anonymous) -> tuple[list[Any], dict[str, Any]]:
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for arg in node.expressions:
            if isinstance(arg, (exp.PropertyEQ, exp.Kwarg)) and not isinstance(arg.expression, exp.Lambda):
                kwargs[arg.this.name.lower()] = self._argument(arg.expression)
            else:
                args.append(self._argument(arg))
        return args, kwargs

    def _argument(self, arg: exp.Expression) -> Any:
        if isinstance(arg, exp.Lambda):
            return arg
        # A call's arguments are part of the tree whose paths the enclosing ``expand`` marked: no second walk.
        result = self._expand(arg)
        # A list stays a list (``@IF(c, @EACH(...))`` splices it); user macros get it as an array.
        return exp.Null() if result is None else result

    def _define(self, node: exp.Anonymous) -> None:
        if len(node.expressions) != 2:
            raise self.error("@DEF takes a name and a value", node, "write @DEF(name, value);")
        target, value = node.expressions
        name = target.name.lower()
        self.locals[name] = value if isinstance(value, exp.Lambda) else self._argument(value)
        return None

    def apply(self, function: exp.Expression, *args: Any) -> values.Returned:
        """Apply a lambda (``x -> x + 1``) or a macro-valued expression to arguments."""
        if not isinstance(function, exp.Lambda):
            raise self.error(f"{function.sql()} is not a lambda", function, "pass a lambda such as x -> x + 1")
        params = [param.name.lower() for param in function.expressions]
        if len(params) != len(args):
            raise self.error(f"the lambda {function.sql()} takes {len(params)} argument(s), got {len(args)}", function,
                             "pass as many arguments as the lambda names")
        bound = dict(zip(params, args))
        body = function.this.copy()
        body = body.transform(lambda n: nodes.bound(n, bound), copy=False)
        with self._scope(bound):
            return self.expand(body)

    @contextmanager
    def _scope(self, bound: Mapping[str, Any]) -> Iterator[None]:
        saved = {name: self.locals[name] for name in bound if name in self.locals}
        self.locals.update(bound)
        try:
            yield
        finally:
            for name in bound:
                self.locals.pop(name, None)
            self.locals.update(saved)

    @contextmanager
    def _nested(self, node: exp.Expression, name: str) -> Iterator[None]:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise self.error(f"macro @{name} nests deeper than {MAX_DEPTH} calls", node,
                                 "a macro that returns a call to itself never ends: make it stop", macro=name)
            yield
        finally:
            self._depth -= 1

    def _single(self, result: values.Returned, node: exp.Expression) -> exp.Expression:
        if isinstance(result, exp.Expression):
            return result
        raise self.error(f"{node.sql()} did not expand to one expression", node, "use a macro that returns one value")

    def error(self, message: str, node: exp.Expression, hint: str, *, macro: str | None = None) -> ProjectError:
        """A ProjectError at the macro's place in the file: the line sqlglot recorded for the node (or one of its
        children), the column of ``@macro`` on it when the source text is known."""
        line = nodes.line_of(node)
        col = nodes.col_of(node)
        snippet = nodes.readable(node)
        if line and self.source.text is not None:
            line, col, snippet = nodes.locate(self.source.text, line, col, macro)
        return ProjectError(
            message,
            path=self.source.path,
            line=line + self.source.first_line - 1 if line else self.source.first_line,
            col=col,
            snippet=snippet,
            hint=hint,
        )


def _call_function(evaluator: MacroEvaluator, function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
    if getattr(function, "__sparkmesh_builtin__", False):
        return function(evaluator, *args, **kwargs)
    args = [nodes.as_array(arg) for arg in args]
    kwargs = {name: nodes.as_array(value) for name, value in kwargs.items()}
    args, kwargs = values.typed_arguments(function, args, kwargs, evaluator.dialect)
    with exits_refused():
        return function(evaluator, *args, **kwargs)


