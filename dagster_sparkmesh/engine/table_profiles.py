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
        return self.model_dump(exclude={"column"}) != other.model_dump(exclude={"column"})


class TableProfile(Record):
    relation: str
    rows: int
    columns: tuple[ColumnStatistics, ...]

    def column(self, name: str) -> ColumnStatistics | None:
        return next((c for c in self.columns if c.column == name), None)


def profile_table(engine: SparkEngine, relation: str) -> TableProfile:
    """``relation``: a view or table the engine can read (an environment's view, a physical table)."""
    types = dict(engine.catalog.columns(relation))
    parts = ["COUNT(*)"]
    for column, type_ in types.items():
        parts.extend(_aggregates(quote_identifier(column), type_.lower()))
    row = engine.catalog.query_rows(f"SELECT {', '.join(parts)} FROM {quote(relation)}")[0]
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
    found = [f"COUNT(*) - COUNT({column})", f"COUNT(DISTINCT {column})"]
    if type_.startswith(_ORDERED):
        found += [f"MIN({column})", f"MAX({column})"]
    if type_.startswith(_NUMERIC):
        found.append(f"SUM({column})")
    elif type_.startswith("boolean"):
        found.append(f"COUNT_IF({column})")
    return found


def _text(value: object) -> str | None:
    return None if value is None else str(value)
