"""SQLMesh's layers over a project's configuration: the personal overlay and ``SQLMESH__`` variables.

As in SQLMesh, ``~/.sqlmesh/config.yaml`` (the folder is ``$SQLMESH_HOME`` when set) is merged over the project's
configuration, then every ``SQLMESH__KEY__SUB_KEY=value`` environment variable sets one nested key
(``SQLMESH__GATEWAYS__SPARK__CONNECTION__TYPE=spark``; keys are lower-cased, values read as YAML scalars). This is
how a project whose own gateways are all DuckDB or Snowflake gets a Spark gateway without being edited.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.project.config.template import render_config

ENV_PREFIX = "SQLMESH__"
HOME_VARIABLE = "SQLMESH_HOME"


@dataclass(frozen=True)
class Overrides:
    data: dict[str, Any] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    """Where the overrides came from, for messages (``~/.sqlmesh/config.yaml``, ``SQLMESH__DEFAULT_GATEWAY`` ...)."""


def read_overrides(environ: Mapping[str, str]) -> Overrides:
    data: dict[str, Any] = {}
    sources: list[str] = []
    overlay = _overlay_path(environ)
    if overlay.is_file():
        data = deep_merge(data, _read_overlay(overlay))
        sources.append(str(overlay))
    for name in sorted(key for key in environ if key.upper().startswith(ENV_PREFIX)):
        path = [part.lower() for part in name[len(ENV_PREFIX) :].split("__") if part]
        if path:
            data = deep_merge(data, _nested(path, _scalar(environ[name])))
            sources.append(name)
    return Overrides(data=data, sources=tuple(sources))


def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``: mappings merge key by key, anything else is replaced."""
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _overlay_path(environ: Mapping[str, str]) -> Path:
    home = environ.get(HOME_VARIABLE, "").strip()
    folder = Path(home).expanduser() if home else Path.home() / ".sqlmesh"
    return folder / "config.yaml"


def _read_overlay(path: Path) -> dict[str, Any]:
    try:
        # Rendered as a Jinja template first, as SQLMesh renders every config file (env_var for credentials).
        data = yaml.safe_load(render_config(path.read_text(encoding="utf-8"), path).text) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        mark = getattr(error, "problem_mark", None)
        raise ConfigError(f"invalid personal configuration: {error}", path=path,
                          line=mark.line + 1 if mark else None, hint="check indentation and quoting") from None
    if not isinstance(data, dict):
        raise ConfigError("the personal configuration must be a mapping", path=path, hint="write key: value pairs")
    return {str(key).lower(): value for key, value in data.items()}


def _nested(path: list[str], value: Any) -> dict[str, Any]:
    for key in reversed(path):
        value = {key: value}
    return value


def _scalar(text: str) -> Any:
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, (str, int, float, bool)) or value is None else text
