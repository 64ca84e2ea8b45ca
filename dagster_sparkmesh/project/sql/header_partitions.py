"""``partitioned_by`` of a MODEL header: column names, and expressions over one column as SQLMesh accepts them
(BigQuery's ``DATE(ts)``, ``TIMESTAMP_TRUNC(ts, DAY)``, Iceberg's ``day(ts)``, ``bucket(4, id)``).

SQLMesh checks only that an expression reads exactly one column; what its engine then does differs (DuckDB ignores
partitioning, its Spark engine refuses a non-column ``PARTITIONED BY`` when it creates the table, BigQuery and
Iceberg partition by it). Here the rows never depend on it: an Iceberg table partitions by the transform the
expression means, any other table is not partitioned by it, and the loader says so (``partition_warnings``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dagster_sparkmesh.model.records import Model, PartitionExpression
from dagster_sparkmesh.model.table_formats import ICEBERG, lakehouse_format
from dagster_sparkmesh.project.sql.header_values import Value

_WORD = re.compile(r'^[`"]?([A-Za-z_][A-Za-z0-9_]*)[`"]?$')

# Iceberg's time transforms, by the unit a truncation or a function names.
_TIME_TRANSFORMS = {"year": "years", "month": "months", "day": "days", "date": "days", "hour": "hours"}
_TRUNCATIONS = (exp.TimestampTrunc, exp.DateTrunc, exp.DatetimeTrunc)


def read_partitioned_by(value: Value, dialect: str) -> tuple[tuple[str, ...], tuple[PartitionExpression, ...]]:
    """The columns and the expressions of ``partitioned_by``, each in the order written."""
    columns: list[str] = []
    expressions: list[PartitionExpression] = []
    for item in value.items():
        word = _WORD.match(item.text)
        if word:
            columns.append(word.group(1).lower())
        else:
            expressions.append(_expression(item, dialect))
    return tuple(columns), tuple(expressions)


def _expression(item: Value, dialect: str) -> PartitionExpression:
    try:
        parsed = sqlglot.parse_one(item.text, read=dialect)
    except SqlglotError:
        raise item.error(f"partitioned_by {item.text!r} is not a column or an expression",
                         "name columns, or an expression of one column: partitioned_by (region, DATE(ts))") from None
    read = list(parsed.find_all(exp.Column))
    if len(read) != 1:  # SQLMesh's rule
        problem = "does not contain a column" if not read else "contains multiple columns"
        raise item.error(f"partitioned_by {item.text!r} {problem}", "an expression of exactly one column: DATE(ts)")
    column = read[0].name.lower()
    return PartitionExpression(written=item.text, column=column, line=item.line, iceberg=_iceberg(parsed, column))


def _iceberg(parsed: exp.Expression, column: str) -> tuple[str, str, int | None] | None:
    """The Iceberg transform the expression means, if it means one: a truncation to a day (``DATE(ts)``, which
    Spark reads as a cast), hour, month or year, or a function of the column named like a transform."""
    arguments = [parsed.this, *parsed.expressions] if isinstance(parsed.this, exp.Expression) else list(parsed.expressions)
    if isinstance(parsed, exp.Anonymous) and parsed.name.lower() == "bucket":
        width, source = (arguments + [None, None])[:2]
        if isinstance(width, exp.Literal) and width.is_int and isinstance(source, exp.Column) and len(arguments) == 2:
            return ("bucket", column, int(width.this))
        return None
    if not arguments or not isinstance(arguments[0], exp.Column) or len(arguments) != 1:
        return None  # (the column itself must be the one argument: DATE(ts + 1) is no transform)
    if isinstance(parsed, _TRUNCATIONS):
        unit = parsed.args.get("unit")
        name = unit.name.lower() if unit is not None else ""
    elif isinstance(parsed, (exp.Cast, exp.TryCast)):
        name = "date" if parsed.to.is_type(exp.DataType.Type.DATE) else ""
    elif isinstance(parsed, exp.TsOrDsToDate):  # (Snowflake's DATE(ts))
        name = "date"
    else:
        name = (parsed.name if isinstance(parsed, exp.Anonymous) else parsed.key).lower()
    transform = _TIME_TRANSFORMS.get(name) or (name if name in _TIME_TRANSFORMS.values() else None)
    return (transform, column, None) if transform is not None else None


def partition_warnings(models: Iterable[Model]) -> tuple[str, ...]:
    """``file:line`` warnings for the expressions of ``partitioned_by`` a model's table is not partitioned by."""
    warnings = []
    for model in models:
        iceberg = lakehouse_format(model) == ICEBERG
        for expression in model.partition_expressions:
            if iceberg and expression.iceberg is not None:
                continue
            where = f"{model.path.name}:{expression.line}"
            layout = "an Iceberg table has no transform for it" if iceberg else "a Spark table partitions by columns"
            warnings.append(
                f"{where}: partitioned_by {expression.written} of {model.name}: the table is not partitioned by it "
                f"({layout}; SQLMesh's DuckDB ignores partitioning too): the rows are the same"
            )
    return tuple(warnings)
