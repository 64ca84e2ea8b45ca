"""The ``kind`` property of a MODEL header: ``NAME`` or ``NAME (property value, ...)`` → a typed kind record."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable

from sqlglot import exp
from sqlglot.errors import ParseError

from dagster_sparkmesh.model.kinds import (
    SCHEMA_CHANGE_CHOICES,
    VALIDITY_TYPES,
    KIND_ALIASES,
    AuditOnlyKind,
    CustomKind,
    EmbeddedKind,
    ExternalKind,
    FullKind,
    IncrementalByPartitionKind,
    IncrementalByTimeRangeKind,
    IncrementalByUniqueKeyKind,
    IncrementalUnmanagedKind,
    ScdType2ByColumnKind,
    ScdType2ByTimeKind,
    SeedKind,
    ViewKind,
)
from dagster_sparkmesh.model.dialects import DIALECT_HINT, is_known_dialect
from dagster_sparkmesh.model.interval_units import valid_cron
from dagster_sparkmesh.project.sql.header_csv_settings import read_csv_settings
from dagster_sparkmesh.project.sql.header_values import Value
from dagster_sparkmesh.project.sql.merge_properties import read_merge_filter, read_when_matched
from dagster_sparkmesh.records import Record

_KIND = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(\(.*\))?$", re.DOTALL)
_DESTRUCTIVE = SCHEMA_CHANGE_CHOICES["on_destructive_change"]
_ADDITIVE = SCHEMA_CHANGE_CHOICES["on_additive_change"]
# SQLMesh writes time formats with strftime codes; Spark's date functions want Java patterns.
_STRFTIME_TO_SPARK = {"%Y": "yyyy", "%m": "MM", "%d": "dd", "%H": "HH", "%M": "mm", "%S": "ss", "%f": "SSSSSS"}

Fields = dict[str, object]
PropertyReader = Callable[[Value], Fields]


def _time_column(value: Value) -> Fields:
    items = value.items()
    if not items or len(items) > 2 or (len(items) == 2 and not value.is_list()):
        raise value.error("malformed time_column", "write time_column ds or time_column (ds, '%Y-%m-%d')")
    fields: Fields = {"time_column": items[0].word().lower()}
    if len(items) == 2:
        fields["time_column_format"] = spark_time_format(items[1].scalar())
    return fields


def spark_time_format(text: str) -> str:
    for code, pattern in _STRFTIME_TO_SPARK.items():
        text = text.replace(code, pattern)
    return text


def _destructive(value: Value) -> Fields:
    choice = value.scalar().lower()
    if choice not in _DESTRUCTIVE:
        raise value.error(f"invalid on_destructive_change {choice!r}", f"use one of: {', '.join(_DESTRUCTIVE)}")
    return {"on_destructive_change": choice}


def _additive(value: Value) -> Fields:
    choice = value.scalar().lower()
    if choice not in _ADDITIVE:
        raise value.error(f"invalid on_additive_change {choice!r}", f"use one of: {', '.join(_ADDITIVE)}")
    return {"on_additive_change": choice}


def _field(name: str, read: Callable[[Value], object]) -> PropertyReader:
    return lambda value: {name: read(value)}


_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def _materialization_properties(value: Value) -> Fields:
    """``(key = value, ...)`` → (key, JSON) pairs: strings, numbers and booleans as values, anything else as its
    SQL text (SQLMesh hands such values to the class as expressions)."""
    pairs = []
    for item in value.items():
        key, equals, rest = item.text.partition("=")
        if not equals or not re.fullmatch(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*", key):
            raise item.error(f"malformed materialization property {item.text!r}", "write materialization_properties (key = 'value', ...)")
        pairs.append((key.strip().lower(), json.dumps(_property_value(item.sub(len(key) + 1, len(item.text))))))
    return {"materialization_properties": tuple(pairs)}


def _property_value(value: Value) -> object:
    lowered = value.text.lower()
    if value.text[:1] in ("'", '"'):
        return value.scalar()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _NUMBER.match(value.text):
        return float(value.text) if "." in value.text else int(value.text)
    return value.text


def _schedule_cron(value: Value) -> str:
    cron = value.scalar()
    if not valid_cron(cron):
        raise value.error(f"invalid auto_restatement_cron {cron!r}",
                          "use @daily, @weekly, @monthly... or a 5-field cron expression like '0 6 * * 1'")
    return cron


def _at_least_one(name: str, hint: str) -> Callable[[Value], int]:
    def read(value: Value) -> int:
        number = value.integer()
        if number < 1:
            raise value.error(f"{name} must be at least 1, not {number}", hint)
        return number
    return read


_AUTO_RESTATEMENT: dict[str, PropertyReader] = {"auto_restatement_cron": _field("auto_restatement_cron", _schedule_cron)}
_AUTO_RESTATED_INTERVALS: dict[str, PropertyReader] = {
    **_AUTO_RESTATEMENT, "auto_restatement_intervals": _field("auto_restatement_intervals", _at_least_one(
        "auto_restatement_intervals", "write auto_restatement_intervals 3, or remove it to restate everything recorded")),
}

_INCREMENTAL_COMMON: dict[str, PropertyReader] = {
    "batch_size": _field("batch_size", Value.integer),
    "forward_only": _field("forward_only", Value.boolean),
    "disable_restatement": _field("disable_restatement", Value.boolean),
    "on_destructive_change": _destructive,
    "on_additive_change": _additive,
}


def _only_one_batch_at_a_time(value: Value) -> Fields:
    """SQLMesh's unique-key kind allows ``batch_concurrency 1`` only (its merges would race)."""
    if value.integer() != 1:
        raise value.error("INCREMENTAL_BY_UNIQUE_KEY models run one batch at a time", "write batch_concurrency 1 or remove it")
    return {}


def _name(value: Value) -> str:
    return value.word().lower()


def _names(value: Value) -> tuple[str, ...]:
    return tuple(item.word().lower() for item in value.items())


def _key(value: Value) -> tuple[str, ...]:
    key = _names(value)
    if not key:
        raise value.error("unique_key lists no column", "write unique_key id or unique_key (a, b)")
    return key


def _tracked_columns(value: Value) -> Fields:
    """``columns [a, b]`` or ``columns *`` (every column but the key), as SQLMesh writes them."""
    if value.text in ("*", "'*'", '"*"'):
        return {"columns": ("*",)}
    columns = _names(value)
    if not columns:
        raise value.error("columns lists no column", "write columns (a, b) or columns *")
    return {"columns": columns}


def _always_forward_only(value: Value) -> Fields:
    """SQLMesh accepts only ``forward_only true`` on INCREMENTAL_BY_PARTITION (the kind always is)."""
    if not value.boolean():
        raise value.error("INCREMENTAL_BY_PARTITION models are always forward-only", "remove forward_only")
    return {}


_SCD_TYPE_2_COMMON: dict[str, PropertyReader] = {
    "unique_key": _field("unique_key", _key),
    "valid_from_name": _field("valid_from_name", _name),
    "valid_to_name": _field("valid_to_name", _name),
    "invalidate_hard_deletes": _field("invalidate_hard_deletes", Value.boolean),
    "disable_restatement": _field("disable_restatement", Value.boolean),
    "forward_only": _field("forward_only", Value.boolean),
    "on_destructive_change": _destructive,
    "on_additive_change": _additive,
    "batch_size": _field("batch_size", Value.integer),
    **_AUTO_RESTATEMENT,
}

_KINDS: dict[str, tuple[type[Record], dict[str, PropertyReader], tuple[str, ...]]] = {
    "FULL": (FullKind, {}, ()),
    "VIEW": (ViewKind, {"materialized": _field("materialized", Value.boolean)}, ()),
    "INCREMENTAL_BY_TIME_RANGE": (
        IncrementalByTimeRangeKind,
        {
            "time_column": _time_column,
            "lookback": _field("lookback", Value.integer),
            "batch_concurrency": _field("batch_concurrency", _at_least_one("batch_concurrency", "write batch_concurrency 1")),
            **_INCREMENTAL_COMMON,
            **_AUTO_RESTATED_INTERVALS,
        },
        ("time_column",),
    ),
    "INCREMENTAL_BY_UNIQUE_KEY": (
        IncrementalByUniqueKeyKind,
        {
            "unique_key": _field("unique_key", _names),
            "batch_concurrency": _only_one_batch_at_a_time,
            **_INCREMENTAL_COMMON,
            **_AUTO_RESTATEMENT,
        },
        ("unique_key",),
    ),
    "SCD_TYPE_2_BY_TIME": (
        ScdType2ByTimeKind,
        {
            "updated_at_name": _field("updated_at_name", _name),
            "updated_at_as_valid_from": _field("updated_at_as_valid_from", Value.boolean),
            **_SCD_TYPE_2_COMMON,
        },
        ("unique_key",),
    ),
    "SCD_TYPE_2_BY_COLUMN": (
        ScdType2ByColumnKind,
        {
            "columns": _tracked_columns,
            "execution_time_as_valid_from": _field("execution_time_as_valid_from", Value.boolean),
            **_SCD_TYPE_2_COMMON,
        },
        ("unique_key", "columns"),
    ),
    "INCREMENTAL_BY_PARTITION": (
        IncrementalByPartitionKind,
        {
            "forward_only": _always_forward_only,
            "disable_restatement": _field("disable_restatement", Value.boolean),
            "on_destructive_change": _destructive,
            "on_additive_change": _additive,
            **_AUTO_RESTATEMENT,
        },
        (),
    ),
    "INCREMENTAL_UNMANAGED": (
        IncrementalUnmanagedKind,
        {
            "insert_overwrite": _field("insert_overwrite", Value.boolean),
            "forward_only": _field("forward_only", Value.boolean),
            "disable_restatement": _field("disable_restatement", Value.boolean),
            "on_destructive_change": _destructive,
            "on_additive_change": _additive,
            **_AUTO_RESTATEMENT,
        },
        (),
    ),
    "CUSTOM": (
        CustomKind,
        {
            "materialization": _field("materialization", Value.scalar),
            "materialization_properties": _materialization_properties,
            "batch_size": _field("batch_size", Value.integer),
            "batch_concurrency": _field("batch_concurrency", Value.integer),
            "lookback": _field("lookback", Value.integer),
            "forward_only": _field("forward_only", Value.boolean),
            "disable_restatement": _field("disable_restatement", Value.boolean),
            **_AUTO_RESTATED_INTERVALS,
        },
        ("materialization",),
    ),
    "SEED": (
        SeedKind,
        {"path": _field("path", Value.scalar), "batch_size": _field("batch_size", Value.integer), "csv_settings": read_csv_settings},
        ("path",),
    ),
    "EMBEDDED": (EmbeddedKind, {}, ()),
    "EXTERNAL": (ExternalKind, {}, ()),
    "AUDIT_ONLY": (
        AuditOnlyKind,
        {"blocking": _field("blocking", Value.boolean), "max_failing_rows": _field(
            "max_failing_rows", _at_least_one("max_failing_rows", "write max_failing_rows 10"))},
        (),
    ),
}

# SQLMesh kinds that cannot be built here: kind → what to use instead.
_REFUSED_KINDS = {
    "MANAGED": "managed tables (Snowflake dynamic tables, Databricks materialized views) do not exist on Spark; "
    "use FULL or an incremental kind",
}
_MODEL_NAME = re.compile(r"[(,]\s*name\s+([A-Za-z0-9_.`\"]+)", re.IGNORECASE)


# Properties whose SQL is read in the model's dialect (then kept as Spark SQL), by kind.
def spark_validity_type(text: str, dialect: str) -> str:
    """SQLMesh's ``time_data_type`` (a type of ``dialect``) as Spark's type of the validity columns, or ``text`` as
    written when it is none of them (the kind record refuses it)."""
    try:
        spark_type = exp.DataType.build(text, dialect=dialect).sql(dialect="spark").upper()
    except (ParseError, ValueError):
        return text
    return "TIMESTAMP" if spark_type == "TIMESTAMP_LTZ" else spark_type


def _time_data_type(value: Value, dialect: str) -> Fields:
    spark_type = spark_validity_type(value.scalar(), dialect)
    if spark_type not in VALIDITY_TYPES:
        raise value.error(f"time_data_type {value.scalar()!r} is not a date or timestamp type Spark has",
                          f"use one of: {', '.join(VALIDITY_TYPES)}")
    return {"time_data_type": spark_type}


_SCD_IN_DIALECT: dict[str, Callable[[Value, str], Fields]] = {"time_data_type": _time_data_type}
_IN_DIALECT: dict[str, dict[str, Callable[[Value, str], Fields]]] = {
    "INCREMENTAL_BY_UNIQUE_KEY": {
        "when_matched": lambda value, dialect: {"when_matched": read_when_matched(value.text, dialect, value.error)},
        "merge_filter": lambda value, dialect: {"merge_filter": read_merge_filter(value.text, dialect, value.error)},
    },
    "SCD_TYPE_2_BY_TIME": _SCD_IN_DIALECT,
    "SCD_TYPE_2_BY_COLUMN": _SCD_IN_DIALECT,
}


def _kind_dialect(value: Value) -> str:
    dialect = value.word().lower()
    if not is_known_dialect(dialect):
        raise value.error(f"unknown dialect {dialect!r} of the kind", DIALECT_HINT)
    return dialect


def _checked_only(read: Callable[[Value], object]) -> PropertyReader:
    """A reader that checks the value and keeps nothing."""
    def reader(value: Value) -> Fields:
        read(value)
        return {}
    return reader


# Readers of the SQLMesh kind properties that change nothing here (``KindBase.without_effect``).
_WITHOUT_EFFECT: dict[str, PropertyReader] = {
    "partition_by_time_column": _checked_only(Value.boolean),
    "updated_at_name": _checked_only(_name),
}


def _items_with_dialect(record: type[Record], items: list[Value], dialect: str) -> tuple[list[Value], str]:
    """The kind's properties but its ``dialect``, and the dialect its SQL properties are read in."""
    rest = []
    for item in items:
        key = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*", item.text)
        if key and key.group(1).lower() == "dialect" and record.has_kind_dialect:  # type: ignore[attr-defined]
            dialect = _kind_dialect(item.sub(key.end(), len(item.text)))
        else:
            rest.append(item)
    return rest, dialect


def read_kind(value: Value, dialect: str = "spark") -> tuple[Record, frozenset[str]]:
    """The kind record, and the fields written (the project's defaults apply to others: ``with_project_defaults``)."""
    match = _KIND.match(value.text)
    if not match:
        raise value.error(f"malformed kind {value.text!r}", "write kind NAME or kind NAME (property value, ...)")
    name = match.group(1).upper()
    name = KIND_ALIASES.get(name, name)
    if name in _REFUSED_KINDS:
        raise value.error(f"{_model_of(value)} has kind {name}, which sparkmesh does not support", _REFUSED_KINDS[name])
    if name not in _KINDS:
        close = difflib.get_close_matches(name, [*_KINDS, *KIND_ALIASES], n=2)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise value.error(f"unknown model kind {match.group(1)!r}", f"{hint}supported kinds: {', '.join(_KINDS)}")
    record, readers, required = _KINDS[name]
    fields: Fields = {}
    if match.group(2):
        items, dialect = _items_with_dialect(record, value.sub(match.start(2), match.end(2)).items(), dialect)
        ignored = {key: _WITHOUT_EFFECT[key] for key in record.without_effect}  # type: ignore[attr-defined]
        for item in items:
            fields.update(_kind_property(name, item, {**readers, **ignored, **_in_dialect(name, dialect)}))
    missing = [prop for prop in required if prop not in fields]
    if missing:
        raise value.error(f"kind {name} needs {missing[0]}", f"write kind {name} ({missing[0]} <value>)")
    return record(**fields), frozenset(fields)


def _in_dialect(kind: str, dialect: str) -> dict[str, PropertyReader]:
    return {key: (lambda value, read=read: read(value, dialect)) for key, read in _IN_DIALECT.get(kind, {}).items()}


def _model_of(value: Value) -> str:
    """``model db.x`` from the header's ``name`` property, which may come after ``kind``."""
    found = _MODEL_NAME.search(value.source)  # the header opens the file, and comments are blanked
    return "model " + found.group(1).strip('`"').lower() if found else "this model"


def _kind_property(kind: str, item: Value, readers: dict[str, PropertyReader]) -> Fields:
    key_match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*", item.text)
    key = key_match.group(1).lower() if key_match else ""
    if key not in readers:
        close = difflib.get_close_matches(key, list(readers), n=2)
        known = ", ".join(readers) or "none"
        hint = f"did you mean {' or '.join(close)}?" if close else f"properties of {kind}: {known}"
        raise item.error(f"unknown property {key or item.text!r} of kind {kind}", hint)
    assert key_match is not None
    return readers[key](item.sub(key_match.end(), len(item.text)))
