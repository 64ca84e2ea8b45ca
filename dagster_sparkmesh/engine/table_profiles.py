"""A table's profile: its row count and, per column, nulls, distinct values, minimum, maximum (and sum of a
number), in one Spark query. Two profiles side by side are a diff that needs no key to join rows on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import quote, quote_identifier

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine

_NUMERIC = ("int", "bigint", "smallint", "tinyint", "double", "float", "decimal")
_ORDERED = (*_NUMERIC, "date", "timestamp", "string", "boolean")


class ColumnStatistics(Record):
    column: str
    type: str
    nulls: int
    distinct: int
    minimum: str | None = None
    maximum: str | None = None
    total: str | None = None
    """The sum of a numeric column; the rows where a boolean column is true."""

    def differs_from(self, other: ColumnStatistics) -> bool:
        if self.model_dump(exclude={"column", "total"}) != other.model_dump(exclude={"column", "total"}):
            return True
        return not _same_total(self.total, other.total, self.type)


class TableProfile(Record):
    relation: str
    rows: int
    columns: tuple[ColumnStatistics, ...]

    def column(self, name: str) -> ColumnStatistics | None:
        return next((c for c in self.columns if c.column == name), None)


def profile_table(engine: SparkEngine, relation: str, where: str | None = None) -> TableProfile:
    """``relation``: a view or table the engine can read (an environment's view, a physical table); ``where``: a
    condition on its rows (a window of its time column), SQL the caller built from validated names."""
    types = dict(engine.catalog.columns(relation))
    parts = ["COUNT(*)"]
    for column, type_ in types.items():
        parts.extend(_aggregates(quote_identifier(column), type_.lower()))
    condition = f" WHERE {where}" if where else ""
    row = engine.catalog.query_rows(f"SELECT {', '.join(parts)} FROM {quote(relation)}{condition}")[0]
    values = iter(row[1:])
    columns = []
    for column, type_ in types.items():
        nulls, distinct = int(next(values) or 0), int(next(values) or 0)
        ordered = type_.lower().startswith(_ORDERED)
        minimum, maximum = (_text(next(values)), _text(next(values))) if ordered else (None, None)
        total = _text(next(values)) if type_.lower().startswith((*_NUMERIC, "boolean")) else None
        columns.append(ColumnStatistics(column=column, type=type_, nulls=nulls, distinct=distinct,
                                        minimum=minimum, maximum=maximum, total=total))
    return TableProfile(relation=relation, rows=int(row[0] or 0), columns=tuple(columns))


def _aggregates(column: str, type_: str) -> list[str]:
    """Distinct values, minimum and maximum of the types Spark orders and hashes (not maps, arrays, structs,
    variants: their count of distinct values is left at 0); a sum that cannot overflow (``try_sum``: NULL)."""
    ordered = type_.startswith(_ORDERED)
    found = [f"COUNT(*) - COUNT({column})", f"COUNT(DISTINCT {column})" if ordered else "0"]
    if ordered:
        found += [f"MIN({column})", f"MAX({column})"]
    if type_.startswith(_NUMERIC):
        found.append(f"try_sum({column})")
    elif type_.startswith("boolean"):
        found.append(f"COUNT_IF({column})")
    return found


def _same_total(left: str | None, right: str | None, type_: str) -> bool:
    """Sums of floating-point columns depend on the order Spark adds them in: equal within a relative 1e-9."""
    if left is None or right is None or not type_.lower().startswith(("double", "float")):
        return left == right
    a, b = float(left), float(right)
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)


def _text(value: object) -> str | None:
    return None if value is None else str(value)
