"""Value conversions of the config reader: ``env_var`` substitution, PostgreSQL URLs, Spark configuration text,
variables as JSON values."""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path

from sqlalchemy.engine import URL

from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.model.kinds import KIND_ALIASES, KindBase, kind_type

_ENV_VAR = re.compile(r"""\{\{\s*env_var\(\s*(['"])(\w+)\1\s*(?:,\s*(['"])(.*?)\3\s*)?\)\s*\}\}""")


def postgres_url(values: dict[str, object]) -> str:
    url = URL.create(
        "postgresql+psycopg2",
        username=_optional_text(values.get("user")),
        password=_optional_text(values.get("password")),
        host=_optional_text(values.get("host")) or "localhost",
        port=int(values["port"]) if values.get("port") is not None else None,  # type: ignore[call-overload]
        database=_optional_text(values.get("database")),
    )
    return url.render_as_string(hide_password=False)


def _optional_text(value: object) -> str | None:
    return None if value is None else str(value)


def spark_conf_text(value: object) -> str:
    # Spark configuration values are strings; YAML turns true/1 into bool/int.
    return str(value).lower() if isinstance(value, bool) else str(value)


def substitute_env_vars(text: str, path: Path) -> str:
    def replace(match: re.Match[str]) -> str:
        name, default = match.group(2), match.group(4)
        value = os.environ.get(name, default)
        if value is None:
            line = text.count("\n", 0, match.start()) + 1
            raise ConfigError(
                f"environment variable {name} is not set",
                path=path,
                line=line,
                snippet=match.group(),
                hint=f"set {name} or give a default: env_var('{name}', 'value')",
            )
        return value

    return _ENV_VAR.sub(replace, text) if "env_var" in text else text


NOT_JSON = object()


def json_value(value: object) -> object:
    """``value`` with dates as ISO text; ``NOT_JSON`` when it holds something else (a set, binary data)."""
    if isinstance(value, date):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, list):
        items = [json_value(item) for item in value]
        return NOT_JSON if any(item is NOT_JSON for item in items) else items
    if isinstance(value, dict):
        pairs = {str(k): json_value(v) for k, v in value.items()}
        return NOT_JSON if any(item is NOT_JSON for item in pairs.values()) else pairs
    return NOT_JSON


def boolean_text(value: object) -> object:
    """``'true'`` / ``'false'`` (any case) as booleans; anything else as it is (a bad value is refused after)."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value


def kind_text(value: object) -> str | None:
    """``model_defaults.kind`` as a header writes it: ``FULL``, ``INCREMENTAL_BY_TIME_RANGE (time_column ds)``, or
    SQLMesh's ``{name: ..., time_column: ds}``; None when it names no kind."""
    if isinstance(value, dict):
        properties = ", ".join(f"{key} {item}" for key, item in value.items() if key != "name")
        value = f"{value.get('name')} ({properties})" if properties else str(value.get("name"))
    if not isinstance(value, str):
        return None
    name = value.split("(")[0].strip().upper()
    return value.strip() if kind_type(KIND_ALIASES.get(name, name)) is not KindBase else None
