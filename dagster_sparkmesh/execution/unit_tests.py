"""Run the project's YAML unit tests on Spark: inputs become temp views, the model's query reads them."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import date, datetime, timedelta

import sqlglot
from sqlglot import exp

from dagster_sparkmesh.engine.failures import spark_errors
from dagster_sparkmesh.errors import SparkMeshError, UnitTestFailure
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.python_runner import expose_frame, python_model_frame
from dagster_sparkmesh.execution.unit_test_types import as_output_types, fed_by_bare_inputs, input_columns
from dagster_sparkmesh.model.records import UnitTest
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.project.checks.unit_tests import incomplete_inputs
from dagster_sparkmesh.project.rendering import render_query
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import DEFAULT_SCHEMA, quote_identifier
from dagster_sparkmesh.snapshot.records import Interval

_OUTPUT = ""
"""Where a Python model's output view is kept among the input views (no table is named "")."""

_DEFAULT_START = datetime(1970, 1, 1)
"""A test's start when its ``vars`` give none, as in SQLMesh (the epoch): a test giving only an ``end`` renders
``[1970-01-01, end]``."""


class UnitTestResult(Record):
    name: str
    model: str
    passed: bool
    message: str = ""


def run_unit_tests(ctx: ExecutionContext, names: set[str] | None = None) -> list[UnitTestResult]:
    """Every selected test, each with its own result: one that Spark cannot run fails with Spark's message, and the
    others still run (as SQLMesh reports each test)."""
    return [
        _run_reported(ctx, test)
        for test in ctx.project.unit_tests
        if names is None or test.name in names or test.model in names
    ]


def failing_tests_of_changes(ctx: ExecutionContext, plan: Plan) -> int:
    """Run the unit tests of the models ``plan`` adds or changes (directly or through a parent); raise when one
    fails, as SQLMesh's plan stops on a failing test; else return how many passed."""
    changed = {*plan.added, *plan.directly_modified, *plan.indirectly_modified}
    tested = {test.model for test in ctx.project.unit_tests} & changed
    if not tested:
        return 0
    results = run_unit_tests(ctx, tested)
    failed = [result for result in results if not result.passed]
    if failed:
        raise UnitTestFailure(
            f"{len(failed)} of {len(results)} unit test(s) of the changed models failed: the plan stops here",
            snippet="\n".join(f"{result.name} ({result.model}): {result.message}" for result in failed),
            hint="fix the model or its test (`sparkmesh test` runs them), or plan with --skip-tests",
        )
    return len(results)


def _run_reported(ctx: ExecutionContext, test: UnitTest) -> UnitTestResult:
    """The test's result; one whose model cannot run (Spark refuses its query, its Python code raises or calls
    ``sys.exit``, a macro fails) is an error of that test alone, naming where, as SQLMesh reports an erroring test
    and runs the others. ``KeyboardInterrupt`` still stops the run."""
    try:
        return _run_one(ctx, test)
    except SparkMeshError as error:
        where = f"{error.location}: " if error.location else ""
        return UnitTestResult(name=test.name, model=test.model, passed=False, message=f"error: {where}{error.message}")


def _run_one(ctx: ExecutionContext, test: UnitTest) -> UnitTestResult:
    model = ctx.project.models[test.model]
    problem = incomplete_inputs(test, model.depends_on, model.depends_on_self)
    if problem:  # checked before any view: SQLMesh refuses the test before it runs
        return UnitTestResult(name=test.name, model=test.model, passed=False, message=f"error: {problem}")
    views = {name: _input_view(ctx, test, name, rows) for name, rows in test.inputs}
    try:
        for name, query in test.input_queries:
            views[name] = _query_view(ctx, query)
        if model.depends_on_self and model.name not in views:
            # As in SQLMesh: a test stands for every table the model reads, its own too (empty unless given);
            # the real table may not exist, and reading it would make the test depend on the warehouse. Its
            # columns are the declared ones, which the loader requires of a self-reading model.
            views[model.name] = _input_view(ctx, test, model.name, ())
        return _compare(ctx, test, views)
    finally:  # the session outlives the test: leave no input views behind
        for view in views.values():
            ctx.engine.catalog.drop_temp_view(view)


def _compare(ctx: ExecutionContext, test: UnitTest, views: dict[str, str]) -> UnitTestResult:
    sql = _model_sql(ctx, test, views)
    problems = [problem for name, rows, query in test.expected_ctes
                if (problem := _cte_difference(ctx, sql, name, rows, query, name in test.partial))]
    partial = "" in test.partial
    if test.checks_query and (problem := _difference(ctx, sql, test.expected_rows, test.expected_query, partial)):
        problems.append(problem)
    return UnitTestResult(name=test.name, model=test.model, passed=not problems, message="; ".join(problems))


def _model_sql(ctx: ExecutionContext, test: UnitTest, views: dict[str, str]) -> str:
    """The SQL giving the model's rows over the test's inputs: a SQL model's rendered query, or a view of what a
    Python model's function returns when called with the inputs as its tables (as SQLMesh tests both)."""
    model = ctx.project.models[test.model]
    start = _parse(test.start) or _DEFAULT_START
    end = _parse_end(test.end) or start + timedelta(days=1)
    execution_time = _parse(test.execution_time) or end
    if model.query is None and model.python_entrypoint:
        interval = Interval(start=start, end=end)
        frame = python_model_frame(ctx, model, interval, _fixture_lookup(views), execution_time,
                                   dict(test.variables))
        # Kept with the inputs under a key no table can have, so that the same cleanup drops it.
        views[_OUTPUT] = view = _view_name()
        expose_frame(frame, view, model)
        return f"SELECT * FROM {quote_identifier(view)}"
    if test.model_query is not None:  # read again with the test's own variables
        model = model.model_copy(update={"query": test.model_query})
    sql = render_query(
        model,
        start=start,
        end=end,
        execution_time=execution_time,
        table_for=_fixture_lookup(views),
        models=ctx.project.models,
        variables={**ctx.project.config.variables, **dict(test.variables)},
    )
    return fed_by_bare_inputs(sql, {name: view for name, view in views.items() if name and "." not in name})


def _fixture_lookup(views: dict[str, str]) -> Callable[[str], str]:
    """The table the rendered query reads for a name: the test's input of that name, else the input named without
    the schema ``default`` (``spy_seed`` feeds the model ``default.spy_seed``, which SQLMesh names ``spy_seed``),
    else the table itself."""
    def lookup(name: str) -> str:
        schema, _, table = name.rpartition(".")
        bare = views.get(table) if schema == DEFAULT_SCHEMA else None
        return views.get(name) or bare or name
    return lookup


def cte_query(sql: str, cte: str) -> str | None:
    """The model's query reduced to the rows of its CTE ``cte`` (the CTEs before it stay, as it may read them);
    None when its top-level WITH clause has no such CTE."""
    query = sqlglot.parse_one(sql, dialect="spark")
    names = cte_names(query)
    if cte.lower() not in names:
        return None
    with_clause = query.args["with_"].copy()
    with_clause.set("expressions", with_clause.expressions[: names.index(cte.lower()) + 1])
    reduced = exp.select("*").from_(exp.to_identifier(cte))
    reduced.set("with_", with_clause)
    return reduced.sql(dialect="spark")


def cte_names(query: exp.Expression) -> list[str]:
    with_clause = query.args.get("with_")
    return [item.alias_or_name.lower() for item in with_clause.expressions] if with_clause else []


def _cte_difference(
    ctx: ExecutionContext, sql: str, cte: str, rows: tuple, query: str | None, partial: bool
) -> str | None:
    reduced = cte_query(sql, cte)
    if reduced is None:
        found = ", ".join(cte_names(sqlglot.parse_one(sql, dialect="spark"))) or "none"
        return f"the model's query has no CTE named {cte} (its CTEs: {found})"
    problem = _difference(ctx, reduced, rows, query, partial)
    return f"CTE {cte}: {problem}" if problem else None


def _difference(ctx: ExecutionContext, sql: str, rows: tuple, query: str | None, partial: bool) -> str | None:
    """What differs between the rows ``sql`` returns and the expected ones (None: they match, in any order). As in
    SQLMesh, the expected rows cover every column of the output, NULL where they name none, unless ``partial``:
    then only the columns they name are compared."""
    frame = ctx.engine.catalog.query_df(sql)
    if query:
        expected_frame = ctx.engine.catalog.query_df(query)
        with spark_errors(query):
            named = list(expected_frame.columns)
            rows = tuple(tuple(zip(named, row)) for row in expected_frame.collect())
    else:
        named = list(dict.fromkeys(column for row in rows for column, _ in row))
    returned = {name.lower(): name for name in frame.columns}
    unknown = [column for column in named if column.lower() not in returned]
    if unknown:
        return f"the outputs name column(s) {', '.join(unknown)} that the model does not return (it returns: {', '.join(frame.columns)})"
    columns = [returned[column.lower()] for column in named] if partial else list(frame.columns)
    with spark_errors(sql):  # the job runs here: a Python model's UDF may fail only now
        collected = frame.select(*columns).collect()
    actual = sorted((_normalize(row) for row in collected), key=repr)  # repr: NULLs sort too
    types = {field.name.lower(): field.dataType.typeName() for field in frame.schema.fields}
    expected = sorted((_normalize(as_output_types(_values(row, columns), columns, types)) for row in rows), key=repr)
    if actual == expected:
        return None
    return f"expected {len(expected)} row(s) {expected[:5]}, got {len(actual)} row(s) {actual[:5]}"


def _values(row: tuple, columns: list[str]) -> tuple:
    """The row's values in ``columns``' order (names compared case-insensitively), None for a column it lacks."""
    given = {column.lower(): value for column, value in row}
    return tuple(given.get(column.lower()) for column in columns)


def _parse_end(value: str | None) -> datetime | None:
    """SQLMesh test ends are inclusive: a bare date means the whole day."""
    if not value:
        return None
    parsed = datetime.fromisoformat(str(value))
    return parsed + timedelta(days=1) if len(str(value)) <= 10 else parsed


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(str(value)) if value else None


def _view_name() -> str:
    return f"sparkmesh_test_{uuid.uuid4().hex[:10]}"


def _query_view(ctx: ExecutionContext, query: str) -> str:
    view = _view_name()
    ctx.engine.catalog.create_query_view(view, query)
    return view


def _input_view(ctx: ExecutionContext, test: UnitTest, name: str, rows) -> str:
    view = _view_name()
    columns = input_columns(ctx, name, rows)
    values = [tuple(dict(row).get(column) for column, _ in columns) for row in rows]
    ctx.engine.catalog.create_temp_view(view, columns, values)
    return view


def _normalize(row: tuple) -> tuple:
    return tuple(_normalize_value(value) for value in row)


def _normalize_value(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (int, bool)):
        return value
    text = str(value)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        pass
    else:  # YAML may give a timestamp as text and Spark as a datetime: compare one spelling
        return moment.isoformat(sep=" ") if len(text) > 10 else moment.date().isoformat()
    try:
        number = float(text)
    except ValueError:
        return text
    return round(number, 6) if "." in text else int(number)
