"""The YAML tree of a project's configuration → ProjectConfig: every section's keys checked, every error with its
line (``loader`` composes the layers: config.yaml, config.py, SQLMesh's overrides, into the text read here)."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

import yaml
from pydantic import ValidationError

from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.project.config import (
    GatewayConfig,
    ModelDefaults,
    PlanDefaults,
    ProjectConfig,
    SparkConnection,
    StateConnection,
)
from dagster_sparkmesh.project.config.sqlmesh_keys import (
    IGNORED_GATEWAY_KEYS,
    IGNORED_KEYS,
    IGNORED_MODEL_DEFAULTS,
    IGNORED_PLAN_KEYS,
    IGNORED_SPARK_KEYS,
    OTHER_ENGINES,
)
from dagster_sparkmesh.project.config.default_checks import check_default
from dagster_sparkmesh.project.config.values import NOT_JSON, boolean_text, json_value, kind_text
from dagster_sparkmesh.project.config.values import postgres_url as _postgres_url
from dagster_sparkmesh.project.config.values import spark_conf_text as _spark_conf_text
from dagster_sparkmesh.project.config.template import render_config
from dagster_sparkmesh.model.kinds import SCHEMA_CHANGE_CHOICES
from dagster_sparkmesh.model.table_formats import property_text
from dagster_sparkmesh.records import Record

# SQLMesh refuses a config without it; a warning lets projects written for sparkmesh before still load.
_NO_DIALECT = ("model_defaults.dialect is not set (SQLMesh requires it): models are read as spark SQL; set it, e.g. "
               "'model_defaults: {dialect: spark}' (or the dialect your models are written in)")


_DEFAULT_STATEMENTS = ("pre_statements", "post_statements", "on_virtual_update")


class ConfigReader:
    """Walks the composed YAML tree; holds the file path and the warnings collected on the way."""

    def __init__(self, path: Path, text: str, *, line: int | None = None) -> None:
        self.path = path
        # config.py: the text is generated, so every message names the line of its Config(...) call instead.
        self.fixed_line = line
        rendered = render_config(text, path) if line is None else None
        self.text = rendered.text if rendered is not None else text
        # Jinja tags spanning lines: the lines named below are those of the rendered text, which the note says.
        self._line_note = " (line of the file as rendered by Jinja)" if rendered is not None and rendered.shifted else ""
        self.warnings: list[str] = []
        self.skipped_gateways: set[str] = set()
        self.gateway_variables: dict[str, dict[str, object]] = {}
        """``gateways.<name>.variables``, of every gateway (a skipped one too: it may be the one the project runs)."""
        self.gateway_catalogs: dict[str, str] = {}
        """The default catalog of each left-out DuckDB gateway (``_duckdb_catalog``)."""
        self._constructor = yaml.constructor.SafeConstructor()

    def read(self) -> ProjectConfig:
        try:
            root = yaml.compose(self.text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = mark.line + 1 if mark else None
            lines = self.text.splitlines()
            raise ConfigError(
                f"invalid YAML: {getattr(error, 'problem', None) or error}{self._line_note}",
                path=self.path,
                line=line,
                snippet=lines[line - 1] if line is not None and line <= len(lines) else None,
                hint="check indentation and quoting",
            ) from None
        if root is None:
            self._warn(None, _NO_DIALECT)
            return ProjectConfig()
        fields: dict[str, object] = {}
        infer_names = False
        for key, key_node, value_node in self._items(root, "config.yaml"):
            if key in IGNORED_KEYS:
                self._warn(key_node, f"{key!r} is a SQLMesh setting that sparkmesh does not use; ignored")
            elif key in _SECTIONS:
                fields[key] = _SECTIONS[key](self, value_node)
            elif key == "model_naming":
                infer_names = self._model_naming(value_node)
            else:
                raise self._unknown(key, key_node, [*_SECTIONS, "model_naming"], "config.yaml")
        if infer_names:  # carried with the defaults every model file is parsed with
            defaults = fields.get("model_defaults") or ModelDefaults()
            fields["model_defaults"] = defaults.model_copy(update={"infer_names": True})  # type: ignore[union-attr]
        if "dialect" not in getattr(fields.get("model_defaults"), "model_fields_set", ()):
            self._warn(root, _NO_DIALECT)
        gateways = fields.get("gateways")
        if isinstance(gateways, dict):
            self._with_gateway_variables(fields)
            self._with_default_catalog(fields)
            self._without_skipped_gateways(fields, root)
        if isinstance(fields.get("gateways"), dict):
            gateways = fields["gateways"]
            fields.setdefault("default_gateway", next(iter(gateways), "local"))
            if fields["default_gateway"] not in gateways:
                raise self._error(root, f"default_gateway {fields['default_gateway']!r} is not among the gateways",
                                  f"use one of: {', '.join(gateways)}")
        return self._build(ProjectConfig, fields, root)  # type: ignore[return-value]

    def _with_gateway_variables(self, fields: dict[str, object]) -> None:
        """The default gateway's variables over the project's, as SQLMesh reads them."""
        default = fields.get("default_gateway") or next(iter(self.gateway_variables), None)
        own = self.gateway_variables.get(str(default), {})
        if own:
            fields["variables"] = {**fields.get("variables", {}), **own}  # type: ignore[dict-item]

    def _with_default_catalog(self, fields: dict[str, object]) -> None:
        """The default gateway's catalog, as SQLMesh names it, when that gateway is a DuckDB one."""
        default = fields.get("default_gateway") or next(iter(self.gateway_variables), None)
        catalog = self.gateway_catalogs.get(str(default))
        if catalog:
            fields["default_catalog"] = catalog

    def _without_skipped_gateways(self, fields: dict[str, object], root: yaml.Node) -> None:
        """A project's non-Spark gateways are left out (warned about in ``_gateway``); fall back to what is left."""
        if not fields["gateways"]:
            del fields["gateways"]
            fields.pop("default_gateway", None)
            self._warn(root, "no gateway connects to Spark; the default Spark engine (the managed server, local[2]) is used "
                             "(add a Spark gateway here, in ~/.sqlmesh/config.yaml or with SQLMESH__GATEWAYS__...)")
        elif fields.get("default_gateway") in self.skipped_gateways:
            first = next(iter(fields["gateways"]))  # type: ignore[call-overload]
            self._warn(root, f"default_gateway {fields['default_gateway']!r} is not a Spark gateway; {first!r} is used")
            fields["default_gateway"] = first

    # -- helpers --------------------------------------------------------------------------------------------

    def _items(self, node: yaml.Node, where: str) -> Iterator[tuple[str, yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self._error(node, f"{where} must be a mapping", "write key: value pairs")
        for key_node, value_node in node.value:
            yield str(key_node.value).lower(), key_node, value_node

    def _value(self, node: yaml.Node) -> object:
        return self._constructor.construct_object(node, deep=True)

    def _text(self, node: yaml.Node, what: str) -> str:
        value = self._value(node)
        if isinstance(value, date):
            return value.isoformat()
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise self._error(node, f"{what} must be a single value", "write a string")
        return str(value)

    def _error(self, node: yaml.Node, message: str, hint: str) -> ConfigError:
        if self.fixed_line is not None:
            return ConfigError(message, path=self.path, line=self.fixed_line, hint=hint)
        line = node.start_mark.line + 1
        lines = self.text.splitlines()
        snippet = lines[line - 1] if line <= len(lines) else None
        return ConfigError(message + self._line_note, path=self.path, line=line, col=node.start_mark.column + 1,
                           snippet=snippet, hint=hint)

    def _unknown(self, key: str, node: yaml.Node, known: list[str], where: str) -> ConfigError:
        close = difflib.get_close_matches(key, known, n=2)
        hint = f"did you mean {' or '.join(close)}?" if close else f"known keys in {where}: {', '.join(known)}"
        return self._error(node, f"unknown key {key!r} in {where}", hint)

    def _warn(self, node: yaml.Node | None, message: str) -> None:
        line = self.fixed_line if self.fixed_line is not None else node.start_mark.line + 1 if node is not None else 1
        self.warnings.append(f"{self.path.name}:{line}: {message}{self._line_note}")

    def _build(self, record: type[Record], fields: dict[str, object], node: yaml.Node) -> Record:
        try:
            return record(**fields)
        except ValidationError as error:
            problem = error.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            raise self._error(node, f"invalid value for {where}: {problem['msg']}", "see the configuration reference") from None

    # -- sections -------------------------------------------------------------------------------------------

    def _model_naming(self, node: yaml.Node) -> bool:
        """SQLMesh's ``model_naming: {infer_names: true}``: a model without a name is named after its file."""
        infer = False
        for key, key_node, value_node in self._items(node, "model_naming"):
            if key != "infer_names":
                raise self._unknown(key, key_node, ["infer_names"], "model_naming")
            infer = boolean_text(self._value(value_node))
            if not isinstance(infer, bool):
                raise self._error(value_node, f"model_naming.infer_names must be true or false, not {infer!r}",
                                  "write infer_names: true")
        return infer

    def model_defaults(self, node: yaml.Node) -> ModelDefaults:
        known = ("dialect", "start", "cron", "cron_tz", "interval_unit", "allow_partials", "owner", "batch_size",
                 "batch_concurrency", "on_destructive_change", "on_additive_change", "table_format", "storage_format",
                 "physical_properties", "session_properties", "kind", "enabled", "audits", *_DEFAULT_STATEMENTS)
        fields: dict[str, object] = {}
        for key, key_node, value_node in self._items(node, "model_defaults"):
            if key in ("physical_properties", "session_properties"):
                fields[key] = self._properties(value_node, key)
            elif key in _DEFAULT_STATEMENTS:
                fields[key] = self._texts(value_node, key, "SQL statements", f"{key}: ['SET x = 1']")
            elif key == "kind":
                fields[key] = self._kind(value_node)
            elif key == "audits":
                fields[key] = self._texts(value_node, key, "audit calls", "audits: ['not_null(columns := [id])']")
            elif key in IGNORED_MODEL_DEFAULTS:
                self._warn(key_node, f"model_defaults.{key} is not used by sparkmesh; ignored")
            elif key in known:
                typed = key in ("batch_size", "batch_concurrency", "allow_partials", "enabled")
                fields[key] = self._value(value_node) if typed else self._text(value_node, key)
                if key in ("allow_partials", "enabled"):  # SQLMesh takes 'true' / 'false' as text too
                    fields[key] = boolean_text(fields[key])
                if key.endswith("_format") or key in ("interval_unit", *SCHEMA_CHANGE_CHOICES):
                    fields[key] = str(fields[key]).lower()
                if key == "on_destructive_change" and fields[key] == "ignore":
                    # SQLMesh's "keep the dropped column": no such choice here (a period table hides it, a plain
                    # table refuses); the kinds' own setting stays, which refuses unless the kind allows it.
                    self._warn(key_node, "model_defaults.on_destructive_change 'ignore' is not supported by sparkmesh; "
                                         "ignored (each kind's own on_destructive_change applies, 'error' by default)")
                    del fields[key]
            else:
                raise self._unknown(key, key_node, list(known), "model_defaults")
            check_default(key, fields.get(key), lambda message, hint, at=value_node: self._error(at, message, hint))
        return self._build(ModelDefaults, fields, node)  # type: ignore[return-value]

    def _kind(self, node: yaml.Node) -> str:
        """Header text; its properties are read with each model that takes it (in its dialect)."""
        text = kind_text(self._value(node))
        if text is None:
            raise self._error(node, f"model_defaults.kind {self._value(node)!r} is not a model kind",
                              "write kind: FULL (or VIEW, ...)")
        return text

    def _texts(self, node: yaml.Node, key: str, what: str, example: str) -> tuple[str, ...]:
        value = self._value(node)
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise self._error(node, f"model_defaults.{key} must be a list of {what}", f"write {example}")
        return tuple(items)

    def _properties(self, node: yaml.Node, key: str) -> tuple[tuple[str, str], ...]:
        value = self._value(node)
        if not isinstance(value, dict) or any(isinstance(item, (dict, list)) for item in value.values()):
            example = "write.format.default: parquet" if key == "physical_properties" else "spark.sql.ansi.enabled: false"
            raise self._error(node, f"model_defaults.{key} must map keys to single values", f"write {key}: {{{example}}}")
        return tuple((str(key), property_text(item)) for key, item in value.items())

    def gateways(self, node: yaml.Node) -> dict[str, GatewayConfig]:
        gateways = {name: self._gateway(name, value_node) for name, _, value_node in self._items(node, "gateways")}
        return {name: gateway for name, gateway in gateways.items() if gateway is not None}

    def _gateway(self, name: str, node: yaml.Node) -> GatewayConfig | None:
        fields: dict[str, object] = {}
        self.gateway_variables[name] = {}
        for key, key_node, value_node in self._items(node, f"gateway {name!r}"):
            if key == "variables":
                self.gateway_variables[name] = self.variables(value_node)
        for key, key_node, value_node in self._items(node, f"gateway {name!r}"):
            if key == "variables":
                continue
            if key in IGNORED_GATEWAY_KEYS:
                self._warn(key_node, f"gateways.{name}.{key} is not used by sparkmesh; ignored")
            elif key == "connection" and self._engine_of(value_node) in OTHER_ENGINES:
                self._warn(key_node, f"gateway {name!r} connects to {self._engine_of(value_node)}, not Spark; left out")
                self.skipped_gateways.add(name)
                if self._engine_of(value_node) in ("duckdb", "motherduck"):
                    self.gateway_catalogs[name] = self._duckdb_catalog(value_node)
                return None
            elif key == "connection":
                fields["connection"] = self._spark_connection(value_node)
            elif key == "state_connection":
                fields["state_connection"] = self.state_connection(value_node)
            elif key == "model_defaults":  # over the project's when the gateway is the one used (``config.loader``)
                fields["model_defaults"] = self.model_defaults(value_node)
            else:
                raise self._unknown(key, key_node, ["connection", "state_connection", "model_defaults"], f"gateway {name!r}")
        return self._build(GatewayConfig, fields, node)  # type: ignore[return-value]

    def _duckdb_catalog(self, connection: yaml.Node) -> str:
        """DuckDB's default catalog as SQLMesh sees it: the first of ``catalogs``, else the ``database`` file's name
        without its extension, else ``memory`` (an in-memory database)."""
        values = {key: value for key, _, value in self._items(connection, "connection")}
        if "catalogs" in values and isinstance(values["catalogs"], yaml.MappingNode) and values["catalogs"].value:
            return str(values["catalogs"].value[0][0].value).lower()
        database = self._value(values["database"]) if "database" in values else None
        if isinstance(database, str) and database and database != ":memory:":
            return Path(database).name.split(".")[0].lower()
        return "memory"

    def _engine_of(self, connection: yaml.Node) -> str:
        types = [value for key, _, value in self._items(connection, "connection") if key == "type"]
        return str(self._value(types[0])).lower() if types else "spark"

    def _spark_connection(self, node: yaml.Node) -> SparkConnection:
        known = ("type", "mode", "remote", "master", "connect_port", "idle_timeout", "concurrent_tasks", "config")
        fields: dict[str, object] = {}
        for key, key_node, value_node in self._items(node, "connection"):
            if key in IGNORED_SPARK_KEYS:
                self._warn(key_node, f"connection.{key} is not used by sparkmesh; ignored")
            elif key == "wap_enabled":
                self._warn(key_node, "connection.wap_enabled: sparkmesh writes every audited write into an Iceberg table "
                                     "that readers may see through a branch of its own (write-audit-publish); ignored")
            elif key == "config":
                # Spark's keys are case-sensitive (spark.driver.extraJavaOptions): only SQLMesh's own keys fold.
                fields["config"] = {
                    str(k.value): _spark_conf_text(self._value(v)) for _, k, v in self._items(value_node, "config")
                }
            elif key in known:
                fields[key] = self._value(value_node) if key in ("connect_port", "idle_timeout", "concurrent_tasks") else self._text(value_node, key)
            else:
                raise self._unknown(key, key_node, list(known), "connection")
        if str(fields.get("type", "spark")).lower() != "spark":
            raise self._error(node, f"connection type {fields['type']!r} is not supported", "sparkmesh runs on Spark: use type: spark")
        return self._build(SparkConnection, fields, node)  # type: ignore[return-value]

    def state_connection(self, node: yaml.Node) -> StateConnection | None:
        settings = {key: (key_node, value_node) for key, key_node, value_node in self._items(node, "state_connection")}
        kind = self._text(settings["type"][1], "type").lower() if "type" in settings else "sqlite"
        if kind not in ("sqlite", "postgres"):
            self._warn(node, f"state_connection type {kind!r} is not supported; the default SQLite state is used")
            return None
        values = {key: self._value(value_node) for key, (_, value_node) in settings.items() if key != "type"}
        known = ("url", "database") if kind == "sqlite" else ("url", "host", "port", "user", "password", "database")
        for key, (key_node, _) in settings.items():
            if key != "type" and key not in known:
                self._warn(key_node, f"state_connection.{key} is not used by sparkmesh; ignored")
        url = values.get("url")
        if url is None and kind == "sqlite" and values.get("database"):
            url = f"sqlite:///{(self.path.parent / str(values['database'])).resolve()}"
        if url is None and kind == "postgres":
            url = _postgres_url(values)
        return StateConnection(type=kind, url=str(url) if url is not None else None)  # type: ignore[arg-type]

    def variables(self, node: yaml.Node) -> dict[str, object]:
        """As in SQLMesh, a variable is any YAML value: lists and mappings too (``@EACH`` and Python read them)."""
        result: dict[str, object] = {}
        for key, key_node, value_node in self._items(node, "variables"):
            value = json_value(self._value(value_node))
            if value is NOT_JSON:
                raise self._error(value_node, f"variable {key!r} must be a string, number, boolean, list or mapping",
                                  "write a plain YAML value")
            result[key] = value
        return result


def _ttl(reader: ConfigReader, node: yaml.Node) -> str:
    return reader._text(node, "ttl")


def _preview_days(reader: ConfigReader, node: yaml.Node) -> int:
    value = reader._value(node)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise reader._error(node, f"preview_days must be a whole number of days, at least 1, not {value!r}",
                            "write e.g. preview_days: 3")
    return value


def _plan(reader: ConfigReader, node: yaml.Node) -> PlanDefaults:
    fields: dict[str, object] = {}
    for key, key_node, value_node in reader._items(node, "plan"):
        if key in IGNORED_PLAN_KEYS:
            reader._warn(key_node, f"plan.{key} is a SQLMesh setting that sparkmesh does not use; ignored")
        elif key == "include_unmodified":
            value = reader._value(value_node)
            if not isinstance(value, bool):
                raise reader._error(value_node, f"plan.include_unmodified must be true or false, not {value!r}",
                                    "write include_unmodified: true (a view of every model in development "
                                    "environments) or false (views of changed models only, the default)")
            fields[key] = value
        else:
            raise reader._unknown(key, key_node, ["include_unmodified", *sorted(IGNORED_PLAN_KEYS)], "plan")
    return reader._build(PlanDefaults, fields, node)  # type: ignore[return-value]


def _statements(reader: ConfigReader, node: yaml.Node) -> tuple[str, ...]:
    """``before_all`` / ``after_all``: a list of SQL statements (macros allowed: ``@this_env``, ``@views`` ...)."""
    value = reader._value(node)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise reader._error(node, "before_all / after_all must be a list of SQL statements",
                            "write e.g. before_all: [\"CREATE SCHEMA IF NOT EXISTS audit\"]")
    return tuple(value)


_SECTIONS: dict[str, Callable[[ConfigReader, yaml.Node], object]] = {
    "before_all": _statements,
    "after_all": _statements,
    "model_defaults": ConfigReader.model_defaults,
    "gateways": ConfigReader.gateways,
    "default_gateway": lambda reader, node: reader._text(node, "default_gateway"),
    "default_target_environment": lambda reader, node: reader._text(node, "default_target_environment").lower(),
    "state_connection": ConfigReader.state_connection,
    "environment_ttl": _ttl,
    "snapshot_ttl": _ttl,
    "preview_days": _preview_days,
    "plan": _plan,
    "variables": ConfigReader.variables,
}

