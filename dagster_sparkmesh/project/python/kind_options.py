"""A Python model's ``kind`` argument: a kind name, a dict of SQLMesh's kind fields or one of its kind classes,
checked into sparkmesh's kind record (``model.kinds``), with the column names it puts into generated SQL."""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, get_args

from pydantic import TypeAdapter, ValidationError
from sqlglot import exp

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.kinds import KIND_ALIASES, SCHEMA_CHANGE_CHOICES, KindBase, ModelKind, kind_type, taken_defaults
from dagster_sparkmesh.model.dialects import DIALECT_HINT, is_known_dialect
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.python.options import Where, names
from dagster_sparkmesh.project.sql.header_kind import spark_time_format, spark_validity_type
from dagster_sparkmesh.project.sql.merge_properties import read_merge_filter, read_when_matched
from dagster_sparkmesh.sqlmesh_api.kinds import TimeColumn

_KIND_ADAPTER: TypeAdapter[Any] = TypeAdapter(ModelKind)
# A view or an embedded model is SQL that readers inline or query: a DataFrame cannot be either. Seeds and
# external models have no function to run.
_NOT_FOR_PYTHON = frozenset({"VIEW", "EMBEDDED", "SEED", "EXTERNAL"})
_KIND_NAMES = frozenset(member.model_fields["name"].default for member in get_args(get_args(ModelKind)[0]))
_KIND_HINT = 'e.g. kind="FULL", kind=dict(name=ModelKindName.INCREMENTAL_BY_TIME_RANGE, time_column="ds") or FullKind()'
# SQLMesh kind fields that only tune SQLMesh's own execution: accepted, without effect here.
_IGNORED_KIND_FIELDS = frozenset(
    {"partition_by_time_column", "min_interval_size", "max_interval_size"}  # fmt: skip
)


def build_kind(
    raw_kind: object, where: Where, defaults: ModelDefaults, *, computed: bool = True, dialect: str = "spark"
) -> Any:
    """``computed``: the model's function computes its rows (not ``is_sql``), so it must be materialized;
    ``dialect``: the one its SQL is written in (``when_matched``, ``merge_filter``)."""
    raw = {key: value for key, value in _kind_dict(raw_kind, where).items() if value is not None or key == "name"}
    raw["name"] = KIND_ALIASES.get(raw["name"], raw["name"])
    for field_name in ("unique_key", "columns"):
        if isinstance(raw.get(field_name), (str, list)):
            value = raw[field_name]
            raw[field_name] = (value,) if isinstance(value, str) else tuple(value)
    for policy in SCHEMA_CHANGE_CHOICES.keys() & raw.keys():  # SQLMesh's enums hold upper-case values
        raw[policy] = str(raw[policy]).lower()
    record = kind_type(raw["name"])
    _take_project_defaults(raw, record, defaults, written_as_dict=isinstance(raw_kind, dict))
    for ignored in (_IGNORED_KIND_FIELDS | record.without_effect) & raw.keys():
        del raw[ignored]
    if record.has_kind_dialect and "dialect" in raw:  # the one its SQL properties are written in
        dialect = str(raw.pop("dialect")).lower()
        if not is_known_dialect(dialect):
            raise where.error("kind", f"unknown dialect {dialect!r} of the kind", raw_kind, DIALECT_HINT)
    if "time_data_type" in raw:  # a type of the kind's dialect, as a header reads it
        raw["time_data_type"] = spark_validity_type(str(raw["time_data_type"]), dialect)
    _one_batch_at_a_time(raw, where, raw_kind)
    _read_merge_clauses(raw, where, raw_kind, dialect)
    allowed = _KIND_NAMES - _NOT_FOR_PYTHON if computed else _KIND_NAMES
    if raw["name"] not in allowed:
        what = "a Python model that returns DataFrames" if raw["name"] in _KIND_NAMES else "sparkmesh"
        raise where.error("kind", f"kind {raw['name']} is not supported by {what}", raw_kind,
                          f"use one of: {', '.join(sorted(allowed))}")
    try:
        return _KIND_ADAPTER.validate_python(raw)
    except ValidationError as error:
        problem = error.errors()[0]
        place = ".".join(str(part) for part in problem["loc"][1:])  # the first part is the kind's name
        raise where.error("kind", f"{place}: {problem['msg']}" if place else problem["msg"], raw_kind, _KIND_HINT) from error


def _take_project_defaults(raw: dict[str, Any], record: type[KindBase], defaults: ModelDefaults, *, written_as_dict: bool) -> None:
    """The project's defaults of the fields the kind takes and ``raw`` leaves out. SQLMesh passes its defaults to a
    kind written as a dict only (a name or a kind object keeps the kind's own); ``batch_size`` is sparkmesh's."""
    taken = taken_defaults(record, defaults.kind_fields, raw.keys())
    raw.update(taken if written_as_dict else {field: value for field, value in taken.items() if field == "batch_size"})


def _one_batch_at_a_time(raw: dict[str, Any], where: Where, raw_kind: object) -> None:
    """SQLMesh's unique-key kind takes ``batch_concurrency`` 1 only (its default), as the SQL header does."""
    if kind_type(raw["name"]).upserts and "batch_concurrency" in raw:
        if raw.pop("batch_concurrency") != 1:
            raise where.error("kind", "INCREMENTAL_BY_UNIQUE_KEY models run one batch at a time", raw_kind,
                              "write batch_concurrency=1 or leave it out")


def _read_merge_clauses(raw: dict[str, Any], where: Where, raw_kind: object, dialect: str) -> None:
    """``when_matched`` / ``merge_filter`` as SQL text (or sqlglot expressions, as SQLMesh takes them), checked."""
    for field_name, read in (("when_matched", read_when_matched), ("merge_filter", read_merge_filter)):
        value = raw.get(field_name)
        if value is None:
            continue
        if isinstance(value, exp.Expression):
            text = value.sql(dialect)
        else:
            text = " ".join(value) if isinstance(value, list) else str(value)
        raw[field_name] = read(text, dialect, lambda message, hint: where.error("kind", message, raw_kind, hint))


def _kind_dict(raw_kind: object, where: Where) -> dict[str, Any]:
    if hasattr(raw_kind, "as_dict"):  # a kind object from sqlmesh.core.model.kind
        raw = dict(raw_kind.as_dict())
    elif hasattr(raw_kind, "model_dump"):  # one of our own kind records
        raw = dict(raw_kind.model_dump())
    elif isinstance(raw_kind, (str, Enum)):
        raw = {"name": raw_kind}
    elif isinstance(raw_kind, dict):
        raw = dict(raw_kind)
    else:
        raise where.error("kind", f"expected a kind name, a dict or a kind object, not {type(raw_kind).__name__}", raw_kind, _KIND_HINT)
    name = raw.get("name")
    name = name.value if isinstance(name, Enum) else name
    if not isinstance(name, str) or not name.strip():
        raise where.error("kind", "the kind has no name", raw_kind, _KIND_HINT)
    raw["name"] = name.strip().upper()
    raw.update(_time_column_fields(raw.get("time_column")))
    return {key: value.value if isinstance(value, Enum) else value for key, value in raw.items()}


def _time_column_fields(value: object) -> dict[str, str]:
    """``time_column=TimeColumn(column="ds", format="%Y%m%d")`` is the column and its format, as in a SQL header."""
    if not isinstance(value, TimeColumn):
        return {}
    fields = {"time_column": value.column}
    if value.format:
        fields["time_column_format"] = spark_time_format(value.format)
    return fields


def model_kind(options: dict[str, Any], where: Where, defaults: ModelDefaults) -> Any:
    """The kind of a Python model from its ``@model`` options; the column names it writes into SQL are checked."""
    if "kind" in options and options["kind"] is None:
        raise where.error("kind", "kind=None is not a kind", None, "leave kind out for FULL, or name a kind")
    dialect = str(options.get("dialect") or defaults.dialect or "spark").lower()
    kind = build_kind(options.get("kind", "FULL"), where, defaults, computed=not options.get("is_sql"), dialect=dialect)
    partitioned_by = names("partitioned_by", options.get("partitioned_by"), where)
    _refuse_odd_column_names(where, _kind_columns(kind) + list(partitioned_by))
    return kind


_COLUMN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KIND_COLUMN_FIELDS = ("time_column", "unique_key", "valid_from_name", "valid_to_name", "updated_at_name", "columns")


def _kind_columns(kind: Any) -> list[str]:
    found: list[str] = []
    for field_name in _KIND_COLUMN_FIELDS:
        value = getattr(kind, field_name, None)
        found.extend([value] if isinstance(value, str) else [n for n in value or () if n != "*"])
    return found


def _refuse_odd_column_names(where: Where, columns: list[object]) -> None:
    """The column names the writers put in generated SQL: plain identifiers only, as a SQL model's header demands."""
    for name in columns:
        if not isinstance(name, str) or not _COLUMN_NAME.match(name):
            raise ProjectError(
                f"invalid column name {name!r} in Python model {where.model}",
                path=where.path,
                line=where.line,
                snippet=repr(name),
                hint="use letters, digits and underscores only, starting with a letter or underscore",
            )
