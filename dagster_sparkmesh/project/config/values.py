"""Value conversions of the config reader: PostgreSQL URLs, Spark configuration text,
variables as JSON values."""

from __future__ import annotations

from datetime import date

from sqlalchemy.engine import URL

from dagster_sparkmesh.model.kinds import KIND_ALIASES, KindBase, kind_type


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
