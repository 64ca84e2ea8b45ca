"""Run the project's YAML unit tests on Spark: inputs become temp views, the model's query reads them."""

from __future__ import annotations

import uuid
from datetime import date, datetime, timedelta

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.model.records import UnitTest
from dagster_sparkmesh.project.rendering import render_query
from dagster_sparkmesh.records import Record

_DEFAULT_START = datetime(2024, 1, 1)


class UnitTestResult(Record):
    name: str
    model: str
    passed: bool
    message: str = ""


def run_unit_tests(ctx: ExecutionContext, names: set[str] | None = None) -> list[UnitTestResult]:
    return [
        _run_one(ctx, test)
        for test in ctx.project.unit_tests
        if names is None or test.name in names or test.model in names
    ]


def _run_one(ctx: ExecutionContext, test: UnitTest) -> UnitTestResult:
    views = {name: _input_view(ctx, test, name, rows) for name, rows in test.inputs}
    try:
        return _compare(ctx, test, views)
    finally:  # the session outlives the test: leave no input views behind
        for view in views.values():
            ctx.engine.drop_temp_view(view)


def _compare(ctx: ExecutionContext, test: UnitTest, views: dict[str, str]) -> UnitTestResult:
    model = ctx.project.models[test.model]
    start = _parse(test.start) or _DEFAULT_START
    end = _parse_end(test.end) or start + timedelta(days=1)
    query = test.expected_query
    sql = render_query(
        model,
        start=start,
        end=end,
        execution_time=_parse(test.execution_time) or end,
        table_for=lambda name: views.get(name, name),
        models=ctx.project.models,
        variables=ctx.project.config.variables,
    )
    frame = ctx.engine.query_df(sql)
    expected_columns = _expected_columns(test, frame.columns)
    actual = sorted(_normalize(row) for row in frame.select(*expected_columns).collect())
    expected = sorted(_normalize(tuple(dict(row).get(c) for c in expected_columns)) for row in test.expected_rows)
    if query:
        expected = sorted(_normalize(tuple(r)) for r in ctx.engine.query_rows(query))
    if actual == expected:
        return UnitTestResult(name=test.name, model=test.model, passed=True)
    return UnitTestResult(
        name=test.name,
        model=test.model,
        passed=False,
        message=f"expected {len(expected)} row(s) {expected[:5]}, got {len(actual)} row(s) {actual[:5]}",
    )


def _parse_end(value: str | None) -> datetime | None:
    """SQLMesh test ends are inclusive: a bare date means the whole day."""
    if not value:
        return None
    parsed = datetime.fromisoformat(str(value))
    return parsed + timedelta(days=1) if len(str(value)) <= 10 else parsed


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(str(value)) if value else None


def _expected_columns(test: UnitTest, actual_columns: list[str]) -> list[str]:
    if test.expected_rows:
        return [column for column, _ in test.expected_rows[0]]
    return list(actual_columns)


def _input_view(ctx: ExecutionContext, test: UnitTest, name: str, rows) -> str:
    view = f"sparkmesh_test_{uuid.uuid4().hex[:10]}"
    columns = _input_columns(ctx, name, rows)
    values = [tuple(dict(row).get(column) for column, _ in columns) for row in rows]
    ctx.engine.create_temp_view(view, columns, values)
    return view


def _input_columns(ctx: ExecutionContext, name: str, rows) -> list[tuple[str, str]]:
    declared = ctx.project.models[name].columns if name in ctx.project.models else ()
    if not declared and name in ctx.project.external_models:
        declared = ctx.project.external_models[name].columns
    if declared:
        return list(declared)
    seen: dict[str, str] = {}
    for row in rows:
        for column, value in row:
            seen.setdefault(column, _spark_type(value))
    return list(seen.items())


def _spark_type(value: object) -> str:
    if isinstance(value, datetime):
        return "TIMESTAMP"
    if isinstance(value, date):
        return "DATE"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "DOUBLE"
    return "STRING"


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
