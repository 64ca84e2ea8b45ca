"""Compare one model between two environments: schema, row counts, and key-joined value differences.

Two Spark queries over the environments' views (a FULL OUTER JOIN on the keys): counts, then a sample.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.records import Record
from dagster_sparkmesh.snapshot.naming import quote, quote_identifier, validate_identifier

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine

_NUMERIC = ("int", "bigint", "smallint", "tinyint", "double", "float", "decimal")


class TableDiff(Record):
    model: str
    source: str
    target: str
    added_columns: tuple[tuple[str, str], ...]
    removed_columns: tuple[tuple[str, str], ...]
    retyped_columns: tuple[tuple[str, str, str], ...]
    source_rows: int
    target_rows: int
    keys: tuple[str, ...]
    only_in_source: int
    only_in_target: int
    matched: int
    mismatches: tuple[tuple[str, int], ...]
    """(column, rows whose value differs among rows matched by key)."""
    sample_header: tuple[str, ...] = ()
    sample: tuple[tuple[str, ...], ...] = ()

    @property
    def identical(self) -> bool:
        return not (
            self.added_columns or self.removed_columns or self.retyped_columns or self.only_in_source
            or self.only_in_target or any(count for _, count in self.mismatches)
        )


def table_diff(
    engine: SparkEngine,
    model: Model,
    source: str,
    target: str,
    *,
    on: list[str] | None = None,
    skip: list[str] = (),
    decimals: int = 3,
    sample_size: int = 5,
) -> TableDiff:
    """``source``, ``target``: what each environment reads for the model (``Environment.relation_of``)."""
    for view in (source, target):
        if not engine.catalog.physical_exists(view):
            raise ExecutionError(f"{view} does not exist", hint="plan and apply that environment first")
    source_columns, target_columns = dict(engine.catalog.columns(source)), dict(engine.catalog.columns(target))
    keys = _keys(model, on)
    skipped = {validate_identifier(c, "column") for c in skip}
    common = [c for c in source_columns if c in target_columns and c not in skipped and c not in keys]
    stats = _join_stats(engine, source, target, keys, common, source_columns, decimals)
    sample_header, sample = _sample(engine, source, target, keys, common, source_columns, decimals, sample_size)
    return TableDiff(
        model=model.name,
        source=source,
        target=target,
        added_columns=tuple((c, t) for c, t in target_columns.items() if c not in source_columns),
        removed_columns=tuple((c, t) for c, t in source_columns.items() if c not in target_columns),
        retyped_columns=tuple(
            (c, t, target_columns[c]) for c, t in source_columns.items() if c in target_columns and target_columns[c] != t
        ),
        source_rows=stats["source_rows"],
        target_rows=stats["target_rows"],
        keys=tuple(keys),
        only_in_source=stats["only_in_source"],
        only_in_target=stats["only_in_target"],
        matched=stats["matched"],
        mismatches=tuple((c, stats[f"diff_{i}"]) for i, c in enumerate(common)),
        sample_header=sample_header,
        sample=sample,
    )


def _keys(model: Model, on: list[str] | None) -> list[str]:
    keys = list(on or model.grains or getattr(model.kind, "unique_key", ()) or ())
    if not keys:
        raise ExecutionError(
            f"{model.name} has no grain or unique key to join rows on", hint="pass -o/--on KEY (repeatable)"
        )
    return [validate_identifier(k, "key column") for k in keys]


def _value(alias: str, column: str, types: dict[str, str], decimals: int) -> str:
    ref = f"{alias}.{quote_identifier(column)}"
    return f"ROUND({ref}, {int(decimals)})" if types.get(column, "").lower().startswith(_NUMERIC) else ref


def _join(source: str, target: str, keys: list[str]) -> str:
    condition = " AND ".join(f"s.{quote_identifier(k)} <=> t.{quote_identifier(k)}" for k in keys)
    return (
        f"(SELECT *, 1 AS __sm_present FROM {quote(source)}) AS s FULL OUTER JOIN "
        f"(SELECT *, 1 AS __sm_present FROM {quote(target)}) AS t ON {condition}"
    )


def _differs(column: str, types: dict[str, str], decimals: int) -> str:
    return f"NOT ({_value('s', column, types, decimals)} <=> {_value('t', column, types, decimals)})"


def _join_stats(engine: SparkEngine, source, target, keys, common, types, decimals) -> dict[str, int]:
    both = "s.__sm_present IS NOT NULL AND t.__sm_present IS NOT NULL"
    diffs = "".join(
        f", SUM(CASE WHEN {both} AND {_differs(c, types, decimals)} THEN 1 ELSE 0 END) AS diff_{i}"
        for i, c in enumerate(common)
    )
    sql = (
        "SELECT SUM(CASE WHEN s.__sm_present IS NOT NULL THEN 1 ELSE 0 END) AS source_rows, "
        "SUM(CASE WHEN t.__sm_present IS NOT NULL THEN 1 ELSE 0 END) AS target_rows, "
        "SUM(CASE WHEN t.__sm_present IS NULL THEN 1 ELSE 0 END) AS only_in_source, "
        "SUM(CASE WHEN s.__sm_present IS NULL THEN 1 ELSE 0 END) AS only_in_target, "
        f"SUM(CASE WHEN {both} THEN 1 ELSE 0 END) AS matched{diffs} FROM {_join(source, target, keys)}"
    )
    names = ["source_rows", "target_rows", "only_in_source", "only_in_target", "matched"]
    names += [f"diff_{i}" for i in range(len(common))]
    row = engine.catalog.query_rows(sql)[0]
    return {name: int(value or 0) for name, value in zip(names, row)}


def _sample(engine: SparkEngine, source, target, keys, common, types, decimals, size):
    if not common or size <= 0:
        return (), ()
    any_diff = " OR ".join(_differs(c, types, decimals) for c in common)
    columns = [f"s.{quote_identifier(k)}" for k in keys]
    header = list(keys)
    for c in common:
        columns += [f"s.{quote_identifier(c)}", f"t.{quote_identifier(c)}"]
        header += [f"{c} ({'source'})", f"{c} ({'target'})"]
    sql = (
        f"SELECT {', '.join(columns)} FROM {_join(source, target, keys)} "
        f"WHERE s.__sm_present IS NOT NULL AND t.__sm_present IS NOT NULL AND ({any_diff}) LIMIT {int(size)}"
    )
    rows = engine.catalog.query_rows(sql)
    return tuple(header), tuple(tuple(str(v) for v in row) for row in rows)
