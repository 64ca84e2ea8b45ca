"""External models: tables the project reads but does not build (``external_models.yaml`` or ``schema.yaml``, and
``external_models/**/*.yaml``). An entry of another gateway (``gateway: name``) is left out of this gateway's project.

The YAML is composed into nodes before it is turned into values so that every error can point at the line of
the offending entry. Two helpers used by the other YAML readers of the project (unit tests) live here too:
``compose_yaml`` and ``normalize_table_name``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import sqlglot
import yaml
from sqlglot import exp
from sqlglot.errors import ParseError

from dagster_sparkmesh.clock import utc_now
from dagster_sparkmesh.errors import PlanError, ProjectError
from dagster_sparkmesh.model.records import AuditCall, ExternalModel, Model
from dagster_sparkmesh.snapshot.naming import qualified_name
from dagster_sparkmesh.project.sql.dialect_numbers import spark_data_type

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEYS = ("name", "columns", "description", "gateway", "dialect", "start", "audits")
_ROOT_FILES = ("external_models.yaml", "external_models.yml", "schema.yaml", "schema.yml")


def compose_yaml(path: Path) -> yaml.Node | None:
    """Parse a YAML file into nodes (which carry line marks); None for an empty file."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ProjectError(f"{path.name} is not valid UTF-8", path=path, hint="save the file as UTF-8") from error
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        raise ProjectError(
            f"invalid YAML: {error.problem or error.context}",
            path=path,
            line=mark.line + 1 if mark else None,
            col=mark.column + 1 if mark else None,
            snippet=_line_of(text, mark.line) if mark else None,
            hint="check the indentation and quoting around this line",
        ) from error
    except yaml.YAMLError as error:
        raise ProjectError(f"invalid YAML: {error}", path=path) from error


def node_value(node: yaml.Node) -> object:
    """The plain Python value of a node (SafeLoader rules: dates become ``datetime.date``)."""
    return yaml.SafeLoader("").construct_object(node, deep=True)


def node_line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def node_col(node: yaml.Node) -> int:
    return node.start_mark.column + 1


def normalize_table_name(text: str, *, path: Path, node: yaml.Node | None = None, line: int | None = None) -> str:
    """``db.table``, ```db`.`table```, ``"DB"."Table"`` → ``db.table``; ``cat.db.table`` → ``cat.db.table``, but
    ``spark_catalog.db.table`` → ``db.table``, and a bare ``table`` → ``default.table`` (as SQLMesh places a name
    without a schema: ``snapshot.naming.qualified_name``); anything else is an error."""
    where = {"path": path, "line": node_line(node) if node else line, "col": node_col(node) if node else None}
    try:
        table = exp.to_table(str(text).replace('"', "`"), dialect="spark")
    except (ParseError, ValueError) as error:
        raise ProjectError(f"invalid table name {text!r}", snippet=str(text), hint="write it as schema.name", **where) from error
    parts = [part.name for part in table.parts]
    if len(parts) not in (1, 2, 3) or table.alias or not all(_IDENTIFIER.match(part) for part in parts):
        raise ProjectError(
            f"table name {text!r} is not of the form name, schema.name or catalog.schema.name",
            snippet=str(text),
            hint="write it as schema.name (or catalog.schema.name; a name without a schema is in the schema default)",
            **where,
        )
    return qualified_name(parts, "table name")


def load_external_models(project_path: Path, gateway: str | None = None) -> dict[str, ExternalModel]:
    """Every external model of the project, by lower-case ``schema.name``: those of ``gateway`` (None: of every
    gateway) and those that name no gateway."""
    files = [project_path / name for name in _ROOT_FILES]
    folder = project_path / "external_models"
    if folder.is_dir():
        files += sorted([*folder.rglob("*.yaml"), *folder.rglob("*.yml")])
    result: dict[str, ExternalModel] = {}
    lines: dict[str, tuple[Path, int]] = {}
    for path in files:
        if not path.is_file():
            continue
        for external, line in _read_file(path):
            if not _on_gateway(external, gateway):
                continue
            if external.name in result:
                first_path, first_line = lines[external.name]
                raise ProjectError(
                    f"external model {external.name} is declared twice",
                    path=path,
                    line=line,
                    snippet=external.name,
                    hint=f"it is first declared at {first_path}:{first_line}; keep one declaration",
                )
            result[external.name] = external
            lines[external.name] = (path, line)
    return result


def _read_file(path: Path) -> list[tuple[ExternalModel, int]]:
    root = compose_yaml(path)
    if root is None:
        return []
    if not isinstance(root, yaml.SequenceNode):
        raise ProjectError(
            "external models must be a YAML list",
            path=path,
            line=node_line(root),
            hint="write one '- name: schema.table' entry per external table",
        )
    return [(_read_entry(path, item), node_line(item)) for item in root.value]


def _on_gateway(external: ExternalModel, gateway: str | None) -> bool:
    return gateway is None or external.gateway is None or external.gateway.lower() == gateway.lower()


def _read_entry(path: Path, node: yaml.Node) -> ExternalModel:
    if not isinstance(node, yaml.MappingNode):
        raise ProjectError(
            "an external model must be a mapping with name and columns",
            path=path,
            line=node_line(node),
            col=node_col(node),
            hint="write it as '- name: schema.table' followed by 'columns:'",
        )
    fields = _mapping_fields(path, node)
    if "name" not in fields:
        raise ProjectError(
            "external model without a name",
            path=path,
            line=node_line(node),
            col=node_col(node),
            hint="add 'name: schema.table' to this entry",
        )
    name_node = fields["name"][1]
    name = normalize_table_name(str(node_value(name_node)), path=path, node=name_node)
    dialect = str(node_value(fields["dialect"][1])) if "dialect" in fields else "spark"
    columns = _read_columns(path, fields["columns"][1], dialect) if "columns" in fields else ()
    description = node_value(fields["description"][1]) if "description" in fields else None
    gateway = node_value(fields["gateway"][1]) if "gateway" in fields else None
    return ExternalModel(
        name=name,
        columns=columns,
        description=str(description) if description is not None else None,
        path=path,
        line=node_line(node),
        gateway=str(gateway) if gateway is not None else None,
        start=_read_start(path, fields["start"][1]) if "start" in fields else None,
        audits=_read_audits(path, fields["audits"][1], dialect) if "audits" in fields else (),
    )


def _read_start(path: Path, node: yaml.Node) -> str:
    from dagster_sparkmesh.dates import parse_datetime

    value = node_value(node)
    text = value.isoformat() if hasattr(value, "isoformat") else str(value)
    try:
        parse_datetime(value if hasattr(value, "isoformat") else text, now=utc_now())
    except PlanError as error:
        raise ProjectError(f"invalid start {text!r} of an external model", path=path, line=node_line(node),
                           col=node_col(node), snippet=text, hint=error.hint) from None
    return text


def _read_audits(path: Path, node: yaml.Node, dialect: str) -> tuple[AuditCall, ...]:
    """``audits: [{name: not_null, columns: "[id]"}, ...]``: argument values are SQL in the entry's dialect."""
    if not isinstance(node, yaml.SequenceNode):
        raise _audit_shape_error(path, node)
    return tuple(_read_audit(path, item, dialect) for item in node.value)


def _read_audit(path: Path, node: yaml.Node, dialect: str) -> AuditCall:
    if not isinstance(node, yaml.MappingNode):
        raise _audit_shape_error(path, node)
    name, args = None, []
    for key_node, value_node in node.value:
        key = str(node_value(key_node)).lower()
        if key == "name":
            name = str(node_value(value_node))
        else:
            args.append((key, _audit_argument(path, value_node, dialect)))
    if not name:
        raise _audit_shape_error(path, node)
    return AuditCall(name=name.lower(), args=tuple(args))


def _audit_argument(path: Path, node: yaml.Node, dialect: str) -> str:
    value = node_value(node)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return "(" + ", ".join(str(item) for item in value) + ")"
    try:
        return sqlglot.parse_one(str(value), dialect=dialect).sql(dialect="spark")
    except (ParseError, ValueError) as error:
        raise ProjectError(f"cannot read audit argument {value!r} as {dialect} SQL", path=path, line=node_line(node),
                           col=node_col(node), snippet=str(value),
                           hint="quote SQL strings inside the YAML string, e.g. min_v: \"'00000'\"") from error


def _audit_shape_error(path: Path, node: yaml.Node) -> ProjectError:
    return ProjectError(
        "audits of an external model must be a list of mappings with a name",
        path=path,
        line=node_line(node),
        col=node_col(node),
        hint="write e.g. 'audits:' then '- name: not_null' and '  columns: \"[id]\"'",
    )


def _mapping_fields(path: Path, node: yaml.MappingNode) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    fields: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key_node, value_node in node.value:
        key = str(node_value(key_node)).lower()
        if key not in _KEYS:
            near = difflib.get_close_matches(key, _KEYS, n=1)
            raise ProjectError(
                f"unknown key {key!r} in an external model",
                path=path,
                line=node_line(key_node),
                col=node_col(key_node),
                snippet=key,
                hint=f"did you mean {near[0]!r}?" if near else f"known keys: {', '.join(_KEYS)}",
            )
        fields[key] = (key_node, value_node)
    return fields


def _read_columns(path: Path, node: yaml.Node, dialect: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(node, yaml.MappingNode):
        raise ProjectError(
            "columns must be a mapping of column name to type",
            path=path,
            line=node_line(node),
            col=node_col(node),
            hint="write e.g. 'columns: {id: INT, ds: DATE}'",
        )
    columns = []
    for key_node, value_node in node.value:
        column = str(node_value(key_node)).strip("`\"").lower()
        columns.append((column, spark_type(node_value(value_node), path=path, node=value_node, dialect=dialect)))
    return tuple(columns)


def spark_type(text: object, *, path: Path, node: yaml.Node | None = None, line: int | None = None, dialect: str = "spark") -> str:
    """A column type in canonical Spark spelling (``int`` → ``INT``); an unknown type is an error."""
    try:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("not a type name")
        data_type = spark_data_type(text, dialect)
    except (ParseError, ValueError, TypeError) as error:
        raise ProjectError(
            f"invalid column type {text!r}",
            path=path,
            line=node_line(node) if node else line,
            col=node_col(node) if node else None,
            snippet=str(text),
            hint="use a Spark SQL type such as INT, BIGINT, DOUBLE, DECIMAL(10, 2), STRING, DATE or TIMESTAMP",
        ) from error
    if data_type.this == exp.DataType.Type.USERDEFINED:
        raise ProjectError(
            f"unknown column type {text!r}",
            path=path,
            line=node_line(node) if node else line,
            col=node_col(node) if node else None,
            snippet=str(text),
            hint="use a Spark SQL type such as INT, BIGINT, DOUBLE, DECIMAL(10, 2), STRING, DATE or TIMESTAMP",
        )
    return data_type.sql(dialect="spark")


def _line_of(text: str, index: int) -> str | None:
    lines = text.splitlines()
    return lines[index] if 0 <= index < len(lines) else None


def undeclared_externals(
    models: Mapping[str, Model], references: Mapping[str, Sequence[Any]], declared: Mapping[str, ExternalModel],
    not_loaded: set[str],
) -> tuple[dict[str, ExternalModel], list[str]]:
    """Tables that models read but no model or ``external_models.yaml`` declares: as in SQLMesh, external tables
    (without columns) and a warning each, naming where it is read, instead of an error. A name a model that did
    not load would have had (``not_loaded``) is no table: its readers are set aside with it. An unqualified name
    is in ``default`` (``FROM events`` reads ``default.events``, where Spark looks for it, as SQLMesh leaves it to
    the engine's current schema)."""
    found: dict[str, ExternalModel] = {}
    warnings: list[str] = []
    for name, model in models.items():
        for reference in references.get(name, ()):
            table = reference.name
            if table == name or table in models or table in declared or table in not_loaded:
                continue
            where = f"{model.path.name}:{reference.line}" if reference.line else model.path.name
            if table not in found:
                found[table] = ExternalModel(name=table, path=model.path, line=reference.line or 1)
                warnings.append(f"{where}: {name} reads {table}, which no model or external_models.yaml declares: "
                                "treated as an external table (declare it, with its columns, in external_models.yaml)")
    return found, warnings
