"""SCD type 2 kinds: keep every version of each key, computed as one Spark query over the table and the source.

Parquet tables have no UPDATE or MERGE, so a run rewrites the whole table (staged, crash-safe:
``SparkEngine.replace_with_query``; a lakehouse table in one overwrite commit, as SQLMesh replaces it:
``execution.writes.lakehouse_keyed``) as the union of three parts:

- closed versions (``valid_to`` set): kept as they are;
- open versions (``valid_to`` NULL): closed at the new version's ``valid_from`` when their key's tracked values
  changed, closed at the execution time when their key left the source and ``invalidate_hard_deletes`` is on,
  else kept open;
- source rows whose key has no open version or whose tracked values changed: opened with ``valid_to`` NULL.

BY_TIME sees a change when ``updated_at`` grew and starts the new version at it; BY_COLUMN compares the tracked
columns null-safe and starts the new version at the execution time. A key the table never held starts, as in
SQLMesh, at 1970-01-01 (BY_TIME, unless ``updated_at_as_valid_from``; BY_COLUMN in the first load, unless
``execution_time_as_valid_from``), else as a new version would. A re-run with the same source changes nothing,
so a retried or re-recorded run is idempotent.

A query that returns several rows for a key runs, as in SQLMesh (which keeps one of them, unspecified which), with
a warning naming the model and a key: one row per key is kept, chosen so that a re-run keeps the same one. BY_TIME
keeps the row with the latest ``updated_at``, and either kind then the row whose other columns, in the query's
order, sort first (ascending, NULL first; a map column, which Spark cannot sort, is skipped). A query whose keys are
unique is merged as written.

BY_TIME's ``updated_at`` column is created as the validity type (``time_data_type``), as SQLMesh 0.236.4 creates
it (a DATE column becomes a TIMESTAMP one by default), and every write casts it to the type the table holds it
in: a history an earlier release created keeps the query's type there (it kept the column as the query typed it
when the validity type is TIMESTAMP), and its rows cannot be written again, so it stays as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from dagster_sparkmesh.clock import to_naive_utc
from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.model.kinds import ScdType2ByColumnKind, ScdType2ByTimeKind
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.snapshot.naming import quote, quote_identifier

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine
    from dagster_sparkmesh.engine.catalog import SparkCatalog

ScdKind = ScdType2ByTimeKind | ScdType2ByColumnKind

# Marker columns telling a LEFT JOIN's matched rows from its unmatched ones (keys may be NULL: they compare <=>).
_OPEN, _NEW, _KNOWN = "__sm_open", "__sm_new", "__sm_known"
_EPOCH = "TIMESTAMP '1970-01-01 00:00:00'"
_PICK = "__sm_pick"


@dataclass(frozen=True)
class Source:
    """What ``check_source`` found: the query's columns, and the ORDER BY that picks the row kept for a repeated key
    (None when every key is unique: the query is merged as written), with the warning that says so."""

    columns: list[str]
    pick_order: str | None = None
    warning: str | None = None


@dataclass(frozen=True)
class MergedHistory:
    rows: int
    """The rows the history holds."""
    warning: str | None = None
    """What ``check_source`` warned of."""


def merge_history(
    engine: SparkEngine,
    table: str,
    model: Model,
    source_sql: str,
    execution_time: datetime,
    partitioned_by: Sequence[str] = (),
) -> MergedHistory:
    """Merge the source's current rows into the history table (created if missing)."""
    kind = model.kind
    source = check_source(engine.catalog, model, source_sql)
    first_load = not engine.catalog.table_exists(table)
    if first_load:
        engine.creation.create_table_like_query(table, with_validity(kind, source_sql, source.columns), partitioned_by)
    columns, updated_at_type = history_columns(kind, engine.catalog.columns(table))
    query = history_query(kind, table, source_sql, columns, execution_time, first_load=first_load,
                          updated_at_type=updated_at_type, pick_order=source.pick_order)
    return MergedHistory(engine.replace_with_query(table, query), source.warning)


def history_columns(kind: ScdKind, table_columns: Sequence[tuple[str, str]]) -> tuple[list[str], str | None]:
    """The history table's columns but the validity ones, and the type it holds BY_TIME's ``updated_at`` in (the
    type every write casts it to; None for BY_COLUMN). ``table_columns``: (name, Spark type) as the catalog lists
    them."""
    validity = (kind.valid_from_name, kind.valid_to_name)
    columns = [name for name, _ in table_columns if name not in validity]
    if not isinstance(kind, ScdType2ByTimeKind):
        return columns, None
    types = {name.lower(): data_type for name, data_type in table_columns}
    return columns, types.get(kind.updated_at_name, kind.time_data_type)


def check_source(catalog: SparkCatalog, model: Model, source_sql: str) -> Source:
    """The source's columns, and how to keep one row of a repeated key (warned about); refuses a source that lacks
    the kind's columns or already returns the validity columns."""
    frame = catalog.query_df(f"SELECT * FROM ({source_sql}) AS source WHERE 1 = 0")
    source_columns = list(frame.columns)
    _check_columns(model, model.kind, [column.lower() for column in source_columns])
    repeated = _repeated_key(catalog, model.kind, source_sql)
    if repeated is None:
        return Source(source_columns)
    # The run goes on, as SQLMesh's does; the warning reaches the CLI's and Dagster's run log with the model's result.
    warning = (f"{model.name} ({model.path}:{model.line}): its query returns several rows for unique_key "
               f"{', '.join(model.kind.unique_key)}, e.g. {repeated}; one row per key is kept, as SQLMesh keeps one: "
               f"{_pick_rule(model.kind)}. Deduplicate in the query to choose the row yourself.")
    return Source(source_columns, _pick_order(model.kind, frame.dtypes), warning)


def history_query(
    kind: ScdKind,
    table: str,
    source_sql: str,
    columns: Sequence[str],
    execution_time: datetime,
    *,
    first_load: bool = False,
    updated_at_type: str | None = None,
    pick_order: str | None = None,
) -> str:
    """The table's next content: closed versions, open versions (closed or not), newly opened versions.
    ``updated_at_type``: the type the table holds BY_TIME's ``updated_at`` in (``history_columns``), else the
    validity type. ``pick_order``: ``Source.pick_order``, the row kept of each key when the query repeats one."""
    valid_from, valid_to = quote_identifier(kind.valid_from_name), quote_identifier(kind.valid_to_name)
    now = _typed(kind, _timestamp(execution_time))
    key = " AND ".join(f"old.{quote_identifier(c)} <=> new.{quote_identifier(c)}" for c in kind.unique_key)
    changed = _changed(kind, columns)
    is_by_time = isinstance(kind, ScdType2ByTimeKind)
    starts = f"CAST(new.{quote_identifier(kind.updated_at_name)} AS {kind.time_data_type})" if is_by_time else now
    no_time = f"CAST(NULL AS {kind.time_data_type})"
    deleted = now if kind.invalidate_hard_deletes else no_time
    first_seen = _typed(kind, _EPOCH) if _unknown_keys_start_at_epoch(kind, first_load) else starts
    key_columns = ", ".join(quote_identifier(c) for c in kind.unique_key)
    known_key = " AND ".join(f"known.{quote_identifier(c)} <=> new.{quote_identifier(c)}" for c in kind.unique_key)
    plain, old, new = (", ".join(f"{prefix}{quote_identifier(c)}" for c in columns) for prefix in ("", "old.", "new."))
    rows = f"({source_sql}) AS query"
    if pick_order is not None:
        rows = (f"(SELECT *, ROW_NUMBER() OVER (PARTITION BY {key_columns} ORDER BY {pick_order}) AS {_PICK} "
                f"FROM ({source_sql}) AS picked) AS query WHERE {_PICK} = 1")
    return (
        f"WITH source AS (SELECT {_source_columns(kind, columns, updated_at_type)} FROM {rows}), "
        f"opened AS (SELECT *, TRUE AS {_OPEN} FROM {quote(table)} WHERE {valid_to} IS NULL), "
        f"known AS (SELECT DISTINCT {key_columns}, TRUE AS {_KNOWN} FROM {quote(table)}) "
        f"SELECT {plain}, {valid_from}, {valid_to} FROM {quote(table)} WHERE {valid_to} IS NOT NULL "
        f"UNION ALL "
        f"SELECT {old}, old.{valid_from}, "
        f"CASE WHEN new.{_NEW} IS NULL THEN {deleted} WHEN {changed} THEN {starts} "
        f"ELSE {no_time} END "
        f"FROM opened AS old LEFT JOIN (SELECT *, TRUE AS {_NEW} FROM source) AS new ON {key} "
        f"UNION ALL "
        f"SELECT {new}, CASE WHEN known.{_KNOWN} IS NULL THEN {first_seen} ELSE {starts} END, "
        f"{no_time} "
        f"FROM source AS new LEFT JOIN opened AS old ON {key} LEFT JOIN known ON {known_key} "
        f"WHERE old.{_OPEN} IS NULL OR {changed}"
    )


def _unknown_keys_start_at_epoch(kind: ScdKind, first_load: bool) -> bool:
    """SQLMesh's rule for a key's first version: BY_TIME from 1970-01-01 unless ``updated_at_as_valid_from``;
    BY_COLUMN from 1970-01-01 in the table's first load unless ``execution_time_as_valid_from``."""
    if isinstance(kind, ScdType2ByTimeKind):
        return not kind.updated_at_as_valid_from
    return first_load and not kind.execution_time_as_valid_from


def _changed(kind: ScdKind, columns: Sequence[str]) -> str:
    if isinstance(kind, ScdType2ByTimeKind):  # compared as the validity type holds them, as SQLMesh does
        updated = quote_identifier(kind.updated_at_name)
        new, old = (_typed(kind, f"{side}.{updated}") for side in ("new", "old"))
        return f"({new} > {old} OR ({old} IS NULL AND {new} IS NOT NULL))"
    tracked = _tracked(kind, columns)
    if not tracked:
        return "FALSE"
    return "(" + " OR ".join(f"NOT (old.{quote_identifier(c)} <=> new.{quote_identifier(c)})" for c in tracked) + ")"


def _tracked(kind: ScdType2ByColumnKind, columns: Sequence[str]) -> list[str]:
    if kind.columns == ("*",):
        return [column for column in columns if column not in kind.unique_key]
    return list(kind.columns)


def with_validity(kind: ScdKind, source_sql: str, columns: Sequence[str]) -> str:
    """The shape of a new history table: the source's ``columns`` (``updated_at`` as the validity type, as SQLMesh
    creates it), then validity."""
    return (
        f"SELECT {_source_columns(kind, columns, kind.time_data_type)}, CAST(NULL AS {kind.time_data_type}) AS "
        f"{quote_identifier(kind.valid_from_name)}, CAST(NULL AS {kind.time_data_type}) AS "
        f"{quote_identifier(kind.valid_to_name)} FROM ({source_sql}) AS query"
    )


def _source_columns(kind: ScdKind, columns: Sequence[str], updated_at_type: str | None) -> str:
    """The history's columns from the source; a BY_TIME ``updated_at`` cast to ``updated_at_type`` (default: the
    validity type), as SQLMesh casts it to the validity column's type (a DATE history keeps the day a version was
    updated)."""
    updated_at = kind.updated_at_name if isinstance(kind, ScdType2ByTimeKind) else None
    typed = updated_at_type or kind.time_data_type
    return ", ".join(
        f"CAST({quote_identifier(c)} AS {typed}) AS {quote_identifier(c)}" if c.lower() == updated_at
        else quote_identifier(c)
        for c in columns
    )


def _typed(kind: ScdKind, expression: str) -> str:
    """``expression`` as the kind's validity type (``time_data_type``); as written for TIMESTAMP, the default."""
    return expression if kind.time_data_type == "TIMESTAMP" else f"CAST({expression} AS {kind.time_data_type})"


def _timestamp(moment: datetime) -> str:
    # The clock may be aware or naive UTC; Spark's literal wants the wall time in UTC.
    moment = to_naive_utc(moment)
    return f"TIMESTAMP '{moment.isoformat(sep=' ')}'"


def _check_columns(model: Model, kind: ScdKind, source_columns: list[str]) -> None:
    clashing = [c for c in (kind.valid_from_name, kind.valid_to_name) if c in source_columns]
    if clashing:
        hint = "the kind adds the validity columns itself: drop the column or set valid_from_name/valid_to_name"
        raise _column_error(model, f"its query already returns {clashing[0]!r}", clashing[0], hint)
    needed = list(kind.unique_key)
    if isinstance(kind, ScdType2ByTimeKind):
        needed.append(kind.updated_at_name)
    elif kind.columns != ("*",):
        needed.extend(kind.columns)
    missing = [c for c in needed if c not in source_columns]
    if missing:
        hint = f"the query returns {', '.join(source_columns)}: fix the kind's properties or the query"
        raise _column_error(model, f"its query returns no column {missing[0]!r}", missing[0], hint)


def _repeated_key(catalog: SparkCatalog, kind: ScdKind, source_sql: str) -> tuple | None:
    key = ", ".join(quote_identifier(c) for c in kind.unique_key)
    duplicate = catalog.query_rows(
        f"SELECT {key} FROM ({source_sql}) AS source GROUP BY {key} HAVING COUNT(*) > 1 LIMIT 1"
    )
    return tuple(duplicate[0]) if duplicate else None


def _pick_rule(kind: ScdKind) -> str:
    latest = f"the latest {kind.updated_at_name}, then " if isinstance(kind, ScdType2ByTimeKind) else ""
    return f"{latest}the row whose other columns sort first"


def _pick_order(kind: ScdKind, dtypes: Sequence[tuple[str, str]]) -> str:
    """The ORDER BY of ``_pick_rule``: fixed by the rows' values alone, so every run keeps the same row. A map
    column is skipped (Spark sorts none); rows equal in every sorted column are alike enough that any will do."""
    keys = {c.lower() for c in kind.unique_key}
    updated_at = kind.updated_at_name.lower() if isinstance(kind, ScdType2ByTimeKind) else None
    order = [f"{quote_identifier(updated_at)} DESC NULLS LAST"] if updated_at else []
    order += [f"{quote_identifier(name)} ASC NULLS FIRST" for name, data_type in dtypes
              if name.lower() not in keys and name.lower() != updated_at and "map<" not in data_type.lower()]
    return ", ".join(order or ["1"])


def _column_error(model: Model, problem: str, column: str, hint: str) -> ExecutionError:
    return ExecutionError(
        f"{model.name} ({model.kind.name}): {problem}", path=model.path, line=model.line, snippet=column, hint=hint
    )
