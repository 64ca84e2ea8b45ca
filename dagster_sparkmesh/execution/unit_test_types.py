"""A unit test's values and input names as SQLMesh reads them: an input's rows are cast to the columns of the
table they stand for (declared, or known from the upstream model's query), expected date and time values are read
as the type of the output column they are compared with (``"2026-08-22 00:00:00"`` for a DATE is that day), and an
input named without a schema feeds the query's tables and CTEs of that name."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime

import sqlglot
from sqlglot import exp

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.project.column_schema import ModelColumns

_UNKNOWN = {"UNKNOWN", "NULL", ""}
_TIME_TYPES = {"date", "timestamp", "timestamp_ntz"}


def input_columns(ctx: ExecutionContext, name: str, rows) -> list[tuple[str, str]]:
    """(column, Spark type) of the view standing for ``name``: its declared columns, else the columns known from
    its query (SQLMesh's ``columns_to_types``), with the types the rows' values have where neither tells."""
    declared = ctx.project.models[name].columns if name in ctx.project.models else ()
    if not declared and name in ctx.project.external_models:
        declared = ctx.project.external_models[name].columns
    if declared:
        return list(declared)
    known = ModelColumns(ctx.project.models, ctx.project.external_models, final=True).types(name) or {}
    types = {column.lower(): data_type.sql(dialect="spark") for column, data_type in known.items()}
    seen: dict[str, str] = {column: type_ for column, type_ in types.items() if type_.upper() not in _UNKNOWN}
    for row in rows:
        for column, value in row:
            if column not in seen:
                seen[column] = value_type(value)
    return list(seen.items())


def value_type(value: object) -> str:
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


def as_output_types(row: tuple, columns: list[str], types: Mapping[str, str]) -> tuple:
    """An expected row (values in ``columns``' order) with its date and time values read as the types of those
    columns in the model's output (``types``: lower-cased column → Spark's type name, ``date``, ``timestamp`` ...);
    any other value, and one that is not a date or time, is left as given (it then compares unequal, as it should)."""
    return tuple(_as_type(value, types.get(column.lower(), "")) for value, column in zip(row, columns))


def _as_type(value: object, type_name: str) -> object:
    if value is None or type_name not in _TIME_TYPES:
        return value
    moment = _moment(value)
    if moment is None:
        return value
    return moment.date() if type_name == "date" else moment


def _moment(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    try:
        return datetime.fromisoformat(str(value).strip())
    except ValueError:
        return None


def fed_by_bare_inputs(sql: str, views: Mapping[str, str]) -> str:
    """``sql`` reading ``views[name]`` wherever it names a table by the bare ``name`` alone (a CTE's too), as SQLMesh
    feeds a test input named without a schema; the reference keeps its name as alias, so ``name.column`` still reads."""
    if not views:
        return sql

    def feed(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Table) or node.args.get("db") or not isinstance(node.this, exp.Identifier):
            return node
        view = views.get(node.name.lower())
        if view is None:
            return node
        fed = exp.to_table(view)
        fed.set("alias", node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(node.name)))
        return fed

    return sqlglot.parse_one(sql, dialect="spark").transform(feed).sql(dialect="spark")
