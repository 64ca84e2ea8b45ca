"""The ``MODEL (...)`` header of a SQL model file: find it, split it into properties, read each property.

The header is located with a bracket matcher that knows strings and comments, then blanked out of the file (same
length, newlines kept) so that the SQL after it parses with its real line numbers. Values are read by hand where
they are simple words, strings or lists (fast, exact positions for errors) and with sqlglot where they are SQL
(column types, audit arguments).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.cron_zones import read_cron_tz
from dagster_sparkmesh.model.interval_units import (
    TOO_FREQUENT_HINT, read_interval_unit, too_frequent, too_frequent_message, valid_cron,
)
from dagster_sparkmesh.model.records import AuditCall, PartitionExpression, SignalCall
from dagster_sparkmesh.macros import sql_text
from dagster_sparkmesh.project.sql.header_kind import read_kind
from dagster_sparkmesh.project.sql.header_partitions import read_partitioned_by
from dagster_sparkmesh.project.sql.header_values import Value
from dagster_sparkmesh.snapshot.naming import qualified_name
from dagster_sparkmesh.model.dialects import is_known_dialect
from dagster_sparkmesh.project.sql.dialect_numbers import spark_data_type
from dagster_sparkmesh.project.sql.like_patterns import like_audit_arguments

_HEADER_START = re.compile(r"\s*MODEL\s*\(", re.IGNORECASE)
_PART = r'[`"]?([A-Za-z_][A-Za-z0-9_]*)[`"]?'
_NAME = re.compile(rf"^(?:{_PART}\.)?(?:{_PART}\.)?{_PART}$")
"""``table`` (in the schema ``default``), ``schema.table`` or ``catalog.schema.table`` (see ``snapshot.naming``)."""


@dataclass(frozen=True)
class HeaderProperty:
    key: str
    """Lower-case property name."""
    value: Value
    key_value: Value
    """The property name as written, for errors about the name itself."""


@dataclass(frozen=True)
class ModelFile:
    """A model file split in two: the header's properties and the SQL body (header blanked, lines kept)."""

    properties: tuple[HeaderProperty, ...]
    body: str
    line: int
    """Line of the ``MODEL`` keyword."""


@dataclass
class ModelHeader:
    """What the header says, before project defaults are applied (None: not written)."""

    name: str | None = None
    kind: object | None = None
    dialect: str | None = None
    cron: str | None = None
    cron_tz: str | None = None
    """As written (``UTC`` kept, so that it overrides a default zone); the model holds None for UTC."""
    interval_unit: str | None = None
    allow_partials: bool | None = None
    start: str | None = None
    end: str | None = None
    owner: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    grains: tuple[str, ...] = ()
    partitioned_by: tuple[str, ...] = ()
    partition_expressions: tuple[PartitionExpression, ...] = ()
    table_format: str | None = None
    storage_format: str | None = None
    stamp: str | None = None
    physical_properties: tuple[tuple[str, str], ...] = ()
    session_properties: tuple[tuple[str, str], ...] = ()
    columns: tuple[tuple[str, str], ...] = ()
    column_descriptions: tuple[tuple[str, str], ...] = ()
    audits: tuple[AuditCall, ...] = ()
    signals: tuple[SignalCall, ...] = ()
    enabled: bool | None = None
    """As written; None: ``model_defaults.enabled`` (true by default)."""
    depends_on: tuple[tuple[str, int], ...] = ()
    """(model name, line) pairs."""
    kind_fields_written: frozenset[str] = frozenset()


def split_model_file(text: str, path: Path) -> ModelFile:
    """Find the ``MODEL (...)`` header at the top of the file (after comments) and split it off."""
    clean = sql_text.strip_comments(text)
    keyword_offset = len(clean) - len(clean.lstrip())
    match = _HEADER_START.match(clean)
    if not match:
        raise _error(
            text,
            keyword_offset,
            path,
            "a SQL model must start with a MODEL (...) header",
            "begin the file with MODEL (name schema.table, kind FULL); then write the query",
        )
    open_offset = match.end() - 1
    close = sql_text.matching_close(clean, open_offset)
    if close is None:
        raise _error(
            text,
            keyword_offset,
            path,
            "the MODEL ( header is never closed",
            "balance the parentheses of the MODEL (...) header (check quotes and nested lists)",
        )
    end = _skip_semicolon(clean, close + 1)
    pieces = sql_text.split_top_level(clean, open_offset + 1, close)
    properties = tuple(_property(clean, piece, path) for piece in pieces)
    body = sql_text.blank(text[:end]) + text[end:]
    return ModelFile(properties, body, sql_text.line_col(text, keyword_offset)[0])


def _skip_semicolon(text: str, offset: int) -> int:
    stripped = text[offset:].lstrip()
    if stripped.startswith(";"):
        return len(text) - len(stripped) + 1
    return offset


def _property(text: str, piece: sql_text.Piece, path: Path) -> HeaderProperty:
    match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*", piece.text)
    if not match:
        raise _error(text, piece.offset, path, "malformed MODEL property", "write each property as: name value")
    value_text = piece.text[match.end() :]
    key = Value(match.group(1), piece.offset, text, path)
    return HeaderProperty(match.group(1).lower(), Value(value_text, piece.offset + match.end(), text, path), key)


def _error(text: str, offset: int, path: Path, message: str, hint: str) -> ProjectError:
    line, col = sql_text.line_col(text, offset)
    return ProjectError(message, path=path, line=line, col=col, snippet=sql_text.line_at(text, offset), hint=hint)


def read_header(model_file: ModelFile, default_dialect: str) -> ModelHeader:
    """Interpret every property; the dialect first, because other values are parsed in it."""
    header = ModelHeader()
    seen: dict[str, HeaderProperty] = {}
    for prop in model_file.properties:
        key = _ALIASES.get(prop.key, prop.key)
        if key not in _READERS:
            raise _unknown_property(prop)
        if key in seen:
            raise prop.key_value.error(f"property {prop.key!r} is written twice", "keep one of them")
        seen[key] = prop
    if "dialect" in seen:
        header.dialect = _read_dialect(seen["dialect"].value)
    dialect = header.dialect or default_dialect
    for key, prop in seen.items():
        if key != "dialect":
            _READERS[key](header, prop.value, dialect)
    return header


def _unknown_property(prop: HeaderProperty) -> ProjectError:
    close = difflib.get_close_matches(prop.key, sorted(_READERS) + sorted(_ALIASES), n=3)
    hint = f"did you mean {' or '.join(close)}?" if close else f"supported properties: {', '.join(sorted(_READERS))}"
    return prop.key_value.error(f"unknown MODEL property {prop.key!r}", hint)


def _read_dialect(value: Value) -> str:
    name = value.scalar().lower()
    if not is_known_dialect(name):
        from sqlglot.dialects.dialect import Dialects

        known = [d.value for d in Dialects if d.value]
        close = difflib.get_close_matches(name, known, n=3)
        raise value.error(f"unknown dialect {name!r}", f"did you mean {' or '.join(close)}?" if close else "use a sqlglot dialect name")
    return name


def _read_name(header: ModelHeader, value: Value, dialect: str) -> None:
    match = _NAME.match(value.text)
    if not match:
        raise value.error(
            f"invalid model name {value.text!r}",
            "name models as schema.table (letters, digits, underscores); a name without a schema is in the schema default",
        )
    header.name = qualified_name([part for part in match.groups() if part])


def _read_cron(header: ModelHeader, value: Value, dialect: str) -> None:
    cron = value.scalar()
    if not valid_cron(cron):
        raise value.error(
            f"invalid cron {cron!r}",
            "use @hourly, @daily, @weekly, @monthly, @yearly or a 5-field cron expression like '0 6 * * *'",
        )
    try:
        frequent = too_frequent(cron)
    except ValueError:
        raise value.error(f"the cron {cron!r} never ticks", "use a cron with dates that exist, e.g. '0 0 28 2 *'") from None
    if frequent:
        raise value.error(too_frequent_message(cron), TOO_FREQUENT_HINT)
    header.cron = cron.lower() if cron.startswith("@") else cron


def _read_date(value: Value, prop: str) -> str:
    text = value.scalar()
    try:
        parsed: date | datetime = datetime.fromisoformat(text) if ("T" in text or " " in text) else date.fromisoformat(text)
    except ValueError:
        raise value.error(f"invalid {prop} date {text!r}", "write an ISO date like '2024-01-31' (or '2024-01-31 06:00:00')") from None
    return parsed.isoformat()


def _read_audits(header: ModelHeader, value: Value, dialect: str) -> None:
    header.audits = tuple(_audit_call(item, dialect) for item in value.items())


def read_audit_call(text: str, dialect: str, path: Path) -> AuditCall:
    """An audit call written outside a header (``model_defaults.audits``), read as a header's."""
    return _audit_call(Value(text, 0, text, path), dialect)


def _audit_call(item: Value, dialect: str) -> AuditCall:
    match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*(\(.*\))?$", item.text, re.DOTALL)
    if not match:
        raise item.error(f"malformed audit {item.text!r}", "write audits (name, name(arg := value, ...))")
    args = tuple(_audit_arg(arg, dialect) for arg in item.sub(match.start(2), match.end(2)).items()) if match.group(2) else ()
    name = match.group(1).lower()
    return AuditCall(name=name, args=like_audit_arguments(name, args, dialect))


def _audit_arg(arg: Value, dialect: str) -> tuple[str, str]:
    # The name may be quoted ("column" = status: projects converted from dbt quote that keyword), as SQLMesh reads it.
    match = re.match(r"(?:([A-Za-z_][A-Za-z0-9_]*)|[\"`]([A-Za-z_][A-Za-z0-9_]*)[\"`])\s*:?=\s*", arg.text)
    if not match:
        raise arg.error(f"malformed audit argument {arg.text!r}", "write audit arguments as name := value")
    sql = arg.text[match.end() :]
    try:
        expression = sqlglot.parse_one(sql, dialect=dialect)
    except SqlglotError as exc:
        raise arg.error(f"invalid audit argument {sql!r}: {exc.args[0].splitlines()[0]}", "write a SQL value") from None
    if isinstance(expression, exp.Array):
        # ``[a, b]`` and ``(a, b)`` mean the same column list; one spelling keeps audits' SQL simple.
        expression = exp.Tuple(expressions=expression.expressions)
    for identifier in expression.find_all(exp.Identifier):
        identifier.set("this", identifier.name.lower())
    return (match.group(1) or match.group(2)).lower(), expression.sql(dialect="spark", comments=False, normalize=True)


def _read_columns(header: ModelHeader, value: Value, dialect: str) -> None:
    columns: list[tuple[str, str]] = []
    for item in value.items():
        # A quoted name may hold spaces (`first name`); a bare one is a plain identifier.
        match = re.match(r'(?:[`"]([^`"]+)[`"]|([A-Za-z_][A-Za-z0-9_]*))\s+(\S.*)$', item.text, re.DOTALL)
        if not match:
            raise item.error(f"malformed column {item.text!r}", "write columns (name TYPE, ...)")
        name, type_text = match.group(1) or match.group(2), match.group(3)
        try:
            spark_type = spark_data_type(type_text, dialect).sql(dialect="spark")
        except (SqlglotError, ValueError):
            raise item.error(f"unknown column type {type_text!r}", "use a SQL type such as INT, STRING, DATE, DECIMAL(10, 2)") from None
        columns.append((name.lower(), spark_type))
    header.columns = tuple(columns)


def _read_column_descriptions(header: ModelHeader, value: Value, dialect: str) -> None:
    pairs: list[tuple[str, str]] = []
    for item in value.items():
        name, sep, _ = item.text.partition("=")
        if not sep:
            raise item.error(f"malformed column description {item.text!r}", "write column_descriptions (column = 'text', ...)")
        description = item.sub(len(name) + 1, len(item.text)).scalar()
        pairs.append((name.strip().strip('`"').lower(), description))
    header.column_descriptions = tuple(pairs)


def _read_depends_on(header: ModelHeader, value: Value, dialect: str) -> None:
    names = []
    for item in value.items():
        match = _NAME.match(item.text)
        if not match:
            raise item.error(f"invalid model name {item.text!r} in depends_on", "name models as schema.table")
        names.append((qualified_name([part for part in match.groups() if part]), item.line))
    header.depends_on = tuple(names)


def _read_signals(header: ModelHeader, value: Value, dialect: str) -> None:
    """``signals [name, name(arg := value)]``, as SQLMesh writes them."""
    from dagster_sparkmesh.project.signals import parse_signal_text

    calls = []
    for item in value.items():
        try:
            calls.append(parse_signal_text(item.text, path=Path(), line=item.line))
        except ProjectError as error:
            raise item.error(error.message, error.hint or "write name or name(arg := value)") from None
    header.signals = tuple(calls)


def _properties_reader(field_name: str) -> Callable[[ModelHeader, Value, str], None]:
    """``field_name (key = 'value', "dotted.key" = 2)``, as SQLMesh writes them: each value as text."""

    def read(header: ModelHeader, value: Value, dialect: str) -> None:
        setattr(header, field_name, _key_values(value, field_name))

    return read


def _key_values(value: Value, property_name: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in value.items():
        key_text, equals, _ = item.text.partition("=")
        if not equals or not key_text.strip() or not item.text[len(key_text) + 1:].strip():
            raise item.error(
                f"expected key = value, got {item.text!r}", f"write {property_name} (key = 'value', \"dotted.key\" = 'value')"
            )
        key = item.sub(0, len(key_text)).text.strip("`\"'")
        pairs.append((key, item.sub(len(key_text) + 1, len(item.text)).scalar()))
    return tuple(pairs)


def _read_grants(header: ModelHeader, value: Value, dialect: str) -> None:
    """SQLMesh's access grants (``grants ('select' = ['group:analysts'])``): checked for their shape only. SQLMesh's
    Spark engine applies none (it skips them with a warning), and neither does sparkmesh."""
    for item in value.items():
        permission, equals, grantees = item.text.partition("=")
        if not equals or not permission.strip() or not grantees.strip():
            raise item.error(f"expected permission = [grantees], got {item.text!r}", "write grants ('select' = ['user'])")


def _setter(field_name: str, read: Callable[[Value], object]) -> Callable[[ModelHeader, Value, str], None]:
    def apply(header: ModelHeader, value: Value, dialect: str) -> None:
        setattr(header, field_name, read(value))

    return apply


def _read_partitioned_by(header: ModelHeader, value: Value, dialect: str) -> None:
    header.partitioned_by, header.partition_expressions = read_partitioned_by(value, dialect)


def _read_kind(header: ModelHeader, value: Value, dialect: str) -> None:
    header.kind, header.kind_fields_written = read_kind(value, dialect)


def _lower_words(value: Value) -> tuple[str, ...]:
    return tuple(item.word().lower() for item in value.items())


_READERS: dict[str, Callable[[ModelHeader, Value, str], None]] = {
    "name": _read_name,
    "kind": _read_kind,
    "dialect": lambda header, value, dialect: None,
    "cron": _read_cron,
    "cron_tz": _setter("cron_tz", lambda value: read_cron_tz(value.scalar(), value.error) or "UTC"),
    "interval_unit": _setter("interval_unit", lambda value: read_interval_unit(value.scalar(), value.error)),
    "allow_partials": _setter("allow_partials", lambda value: value.boolean()),
    "start": _setter("start", lambda value: _read_date(value, "start")),
    "end": _setter("end", lambda value: _read_date(value, "end")),
    "owner": _setter("owner", lambda value: value.scalar()),
    "description": _setter("description", lambda value: value.scalar()),
    "tags": _setter("tags", lambda value: tuple(item.scalar() for item in value.items())),
    "grains": _setter("grains", _lower_words),
    "partitioned_by": _read_partitioned_by,
    "table_format": _setter("table_format", lambda value: value.word().lower()),
    "storage_format": _setter("storage_format", lambda value: value.word().lower()),
    "stamp": _setter("stamp", lambda value: value.scalar()),
    "physical_properties": _properties_reader("physical_properties"),
    # Spark settings set around the model's statements, then restored (as for Python models).
    "session_properties": _properties_reader("session_properties"),
    "grants": _read_grants,
    "grants_target_layer": lambda header, value, dialect: None,
    "columns": _read_columns,
    "column_descriptions": _read_column_descriptions,
    "audits": _read_audits,
    "signals": _read_signals,
    "enabled": _setter("enabled", lambda value: value.boolean()),
    "depends_on": _read_depends_on,
    # SQLMesh's join keys to other models, for its semantic layer: nothing that runs reads them (Python models
    # accept them the same way). SQLMesh's ecommerce example writes them on every model.
    "references": lambda header, value, dialect: None,
    # SQLMesh's Spark engine makes no clustering of ``clustered_by`` (its Hive table properties leave it out),
    # and these tune SQLMesh's own tools (its optimizer's rewriting, its formatter, its linter), not the data.
    "clustered_by": lambda header, value, dialect: None,
    "optimize_query": lambda header, value, dialect: None,
    "formatting": lambda header, value, dialect: None,
    "ignored_rules": lambda header, value, dialect: None,
    # SQLMesh's placement of a model (another gateway's engine, a multi-repo project's name, prod without views,
    # a pinned table version, its view's properties): every model here runs on the project's Spark, its prod
    # environment is views, and its tables are named by their versions. Python models accept them the same way.
    "gateway": lambda header, value, dialect: None,
    "project": lambda header, value, dialect: None,
    "virtual_environment_mode": lambda header, value, dialect: None,
    "physical_version": lambda header, value, dialect: None,
    "virtual_properties": lambda header, value, dialect: None,
}
_ALIASES = {"grain": "grains"}
