"""``@model(...)`` arguments → Model fields, with SQLMesh's meaning and a clear error for each wrong type.

Every check runs at load time with the model file and the ``@model`` line at hand, so an error names them
(the decorator itself only records what it was given). Arguments SQLMesh accepts that have no effect here are
listed in ``IGNORED_ARGUMENTS``: a SQLMesh project loads unchanged, and the README's table says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.model.cron_zones import model_zone, read_cron_tz
from dagster_sparkmesh.model.interval_units import read_interval_unit, unit_longer_than_cron, unit_longer_than_cron_message
from dagster_sparkmesh.model.table_formats import merged_properties, property_text, with_file_format
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.config.values import boolean_text
from dagster_sparkmesh.project.externals import spark_type
from dagster_sparkmesh.macros.parse_errors import parse_error_description

SUPPORTED_ARGUMENTS = frozenset(
    """kind columns depends_on cron start end owner description tags grains grain partitioned_by audits enabled
    column_descriptions dialect pre_statements post_statements references is_sql blueprints signals
    session_properties on_virtual_update table_format storage_format physical_properties stamp interval_unit
    allow_partials cron_tz""".split()
)
IGNORED_ARGUMENTS = frozenset(
    """virtual_properties clustered_by
    optimize_query validate_query formatting gateway ignored_rules
    retention lookback physical_version""".split()
)
"""Accepted for SQLMesh projects, without effect here (see the README's table of SQLMesh APIs)."""

@dataclass(frozen=True)
class Where:
    """The model being loaded, for error messages."""

    model: str
    path: Path
    line: int

    def error(self, argument: str, message: str, value: object, hint: str) -> ProjectError:
        return ProjectError(
            f"@model {argument} of {self.model}: {message}",
            path=self.path,
            line=self.line,
            snippet=f"{argument}={value!r}"[:200],
            hint=hint,
        )


def columns(value: object, where: Where, dialect: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise where.error("columns", f"expected a dict of column name to type, not {type(value).__name__}", value,
                          'write columns={"id": "int", "ds": "date"}')
    return tuple(
        (str(column).lower(), spark_type(_type_text(kind, dialect), path=where.path, line=where.line, dialect=dialect))
        for column, kind in value.items()
    )


def _type_text(kind: object, dialect: str) -> object:
    # SQLMesh also takes sqlglot types: columns={"id": exp.DataType.build("int")}.
    return kind.sql(dialect=dialect) if isinstance(kind, exp.DataType) else kind


def names(argument: str, value: object, where: Where, *, expressions: bool = False) -> tuple[str, ...]:
    """A list of names (``tags``, ``grains`` ...); a single string is one name, as SQLMesh reads it."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple, set, frozenset)) or not all(isinstance(item, str) for item in items):
        raise where.error(argument, "expected a list of strings", value, f'write {argument}=["a", "b"]')
    if expressions:  # grains: "id AS order_id" names the output column order_id
        return tuple(_output_name(item, argument, where) for item in items)
    return tuple(items)


def _output_name(text: str, argument: str, where: Where) -> str:
    try:
        parsed = sqlglot.parse_one(text, dialect="spark")
    except ParseError as error:
        raise where.error(argument, f"cannot parse {text!r}", text, "write a column name") from error
    return parsed.alias_or_name.lower()


def text_map(argument: str, value: object, where: Where) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise where.error(argument, f"expected a dict, not {type(value).__name__}", value, f'write {argument}={{"id": "..."}}')
    return tuple((str(key).lower(), str(text)) for key, text in value.items())


def properties(argument: str, value: object, where: Where) -> tuple[tuple[str, str], ...]:
    """A dict of table properties (``physical_properties``): keys as written, single values as text."""
    if value is None:
        return ()
    if not isinstance(value, dict) or any(isinstance(item, (dict, list, tuple)) for item in value.values()):
        raise where.error(argument, "expected a dict of single values", value, f'write {argument}={{"key": "value"}}')
    return tuple((str(key), property_text(item)) for key, item in value.items())


def enabled(value: object, where: Where) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    raise where.error("enabled", "expected a bool or 'true'/'false'", value, "write enabled=True or enabled=False")


def optional_text(argument: str, value: object, where: Where) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise where.error(argument, f"expected a string, not {type(value).__name__}", value, f'write {argument}="..."')


def time_text(argument: str, value: object, where: Where) -> str | None:
    """``start``/``end``: a date, a timestamp, epoch milliseconds or a relative phrase, as an ISO string."""
    from dagster_sparkmesh.sqlmesh_api.dates import to_datetime

    if value is None:
        return None
    try:
        moment = to_datetime(value)  # type: ignore[arg-type]
    except ValueError as error:
        raise where.error(argument, str(error), value, "write an ISO date like 2024-01-31 or '1 week ago'") from None
    # A relative phrase ("1 week ago") counts in whole days: the model's start then moves once a day, not with
    # every load (it is part of the metadata hash).
    if moment.time() == moment.time().min or _is_relative(value):
        return moment.date().isoformat()
    return moment.replace(tzinfo=None).isoformat(sep=" ")


def _is_relative(value: object) -> bool:
    if not isinstance(value, str) or value.strip().isdigit():
        return False
    try:
        datetime.fromisoformat(value.strip())
    except ValueError:
        return True
    return False


def statements(argument: str, value: object, where: Where, dialect: str) -> tuple[str, ...]:
    """Pre/post statements as canonical Spark SQL (transpiled from the model's dialect)."""
    from dagster_sparkmesh.project.sql.spark_support import check_runs_on_spark
    from dagster_sparkmesh.project.sql.model import canonical_sql

    if value is None:
        return ()
    items = [value] if isinstance(value, (str, exp.Expression)) else value
    if not isinstance(items, (list, tuple)):
        raise where.error(argument, "expected a list of SQL statements", value, f'write {argument}=["SET x = 1"]')
    result = []
    for item in items:
        try:
            parsed = item.copy() if isinstance(item, exp.Expression) else _statement(str(item), dialect, where)
        except ParseError as error:
            raise where.error(argument, f"cannot parse {item!r}: {parse_error_description(error)}", item, "write SQL in the model's dialect") from None
        if parsed is None:  # a macro call that returned None when the model loaded: no statement, as in SQLMesh
            continue
        try:
            check_runs_on_spark(parsed, dialect=dialect, path=where.path, body="")
        except ProjectError as error:  # the statement's own line means nothing in the .py file: point at @model
            raise where.error(argument, error.message, item, error.hint or "") from None
        result.append(canonical_sql(parsed))
    return tuple(result)


def _statement(text: str, dialect: str, where: Where) -> exp.Expression | None:
    """One statement; with ``@`` in it, in the macro syntax (``@noop()`` is a macro call, not Postgres' absolute
    value operator), expanded with the project's macros as a SQL model's statements are: now, or when the model is
    rendered for what waits for the interval. None: the macro returned nothing."""
    if "@" not in text:
        return sqlglot.parse_one(text, dialect=dialect)
    from dagster_sparkmesh.macros import expansion
    from dagster_sparkmesh.macros.project_macros import project_root
    from dagster_sparkmesh.macros.registry import load_user_macros
    from dagster_sparkmesh.project.python.sql_models import project_variables
    from dagster_sparkmesh.project.sql.model import load_evaluator

    root = project_root(where.path)
    evaluator = load_evaluator(where.path, dialect, project_variables(root), load_user_macros(root), None, text)
    statements = expansion.expand(expansion.parse(text, dialect, evaluator.source), evaluator)
    if len(statements) > 1:
        raise where.error("statements", f"expected one statement, found {len(statements)}", text, "write one per item")
    return statements[0] if statements else None


def session_properties(value: object, where: Where) -> tuple[tuple[str, str], ...]:
    """``session_properties={"spark.sql.shuffle.partitions": 8}`` → (key, value text) pairs for ``SET``."""
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise where.error("session_properties", "expected a dict of Spark settings", value,
                          'write session_properties={"spark.sql.shuffle.partitions": 8}')
    return tuple((key, str(item).lower() if isinstance(item, bool) else str(item)) for key, item in value.items())


def flag(name: str, options: dict[str, object], where: Where, default: bool) -> bool:
    """A boolean argument (``allow_partials=True``); ``default`` when not given."""
    value = options.get(name)
    if value is None:
        return default
    value = boolean_text(value)  # SQLMesh takes 'true' / 'false' too
    if isinstance(value, bool):
        return value
    raise where.error(name, f"expected True or False, not {type(value).__name__}", value, f"write {name}=True")


def interval_unit(value: object, where: Where) -> str | None:
    """A unit name or SQLMesh's ``IntervalUnit`` member (its value is the name)."""
    if value is None:
        return None
    text = getattr(value, "value", value)
    if not isinstance(text, str):
        raise where.error("interval_unit", f"expected a unit name, not {type(value).__name__}", value, "write interval_unit='hour'")
    return read_interval_unit(text, lambda message, hint: where.error("interval_unit", message, value, hint))


def _check_interval_unit(scalars: dict[str, Any], where: Where) -> None:
    """An ``interval_unit`` longer than the cron's, without ``allow_partials``: refused at load, as in SQLMesh."""
    try:
        implied = None if scalars["allow_partials"] else unit_longer_than_cron(scalars["interval_unit"], scalars["cron"])
    except (PlanError, ValueError):
        return  # a cron that is not one: the plan refuses it, located in this file
    if implied is not None:
        message, hint = unit_longer_than_cron_message(scalars["interval_unit"], scalars["cron"], implied)
        raise where.error("interval_unit", message, scalars["interval_unit"], hint)


def scalar_options(options: dict[str, Any], where: Where, defaults: ModelDefaults) -> dict[str, Any]:
    """The arguments of one value each (cron, start, owner, formats...), checked, with the defaults filled in."""
    scalars = _scalar_values(options, where, defaults)
    _check_interval_unit(scalars, where)
    scalars["physical_properties"] = with_file_format(
        scalars["table_format"], scalars["storage_format"], scalars["physical_properties"]
    )
    return scalars


def _scalar_values(options: dict[str, Any], where: Where, defaults: ModelDefaults) -> dict[str, Any]:
    text = optional_text
    grains = options.get("grains", options.get("grain"))
    return {
        "cron": text("cron", options.get("cron"), where) or defaults.cron,
        "cron_tz": _cron_tz(options.get("cron_tz"), where, defaults),
        "interval_unit": interval_unit(options.get("interval_unit"), where) or defaults.interval_unit,
        "allow_partials": flag("allow_partials", options, where, defaults.allow_partials),
        "start": time_text("start", options.get("start"), where) or defaults.start,
        "end": time_text("end", options.get("end"), where),
        "owner": text("owner", options.get("owner"), where) or defaults.owner,
        "description": text("description", options.get("description"), where),
        "tags": names("tags", options.get("tags"), where),
        "grains": tuple(g.lower() for g in names("grains", grains, where, expressions=True)),
        "partitioned_by": tuple(c.lower() for c in names("partitioned_by", options.get("partitioned_by"), where)),
        "table_format": _lower(text("table_format", options.get("table_format"), where)) or defaults.table_format,
        "storage_format": _lower(text("storage_format", options.get("storage_format"), where)) or defaults.storage_format,
        "stamp": text("stamp", options.get("stamp"), where),
        "physical_properties": merged_properties(
            defaults.physical_properties,
            properties("physical_properties", options.get("physical_properties"), where),
        ),
        "column_descriptions": text_map("column_descriptions", options.get("column_descriptions"), where),
        "enabled": enabled(options.get("enabled", defaults.enabled), where),
    }


def _cron_tz(value: object, where: Where, defaults: ModelDefaults) -> str | None:
    written = optional_text("cron_tz", value, where)
    if written is not None:
        written = read_cron_tz(written, lambda message, hint: where.error("cron_tz", message, value, hint)) or "UTC"
    return model_zone(written, defaults.cron_tz)


def _lower(value: str | None) -> str | None:
    return value.lower() if value else value
