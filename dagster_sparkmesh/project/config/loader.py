"""``config.yaml`` / ``config.py`` → ProjectConfig, reading SQLMesh's keys where they apply.

YAML is composed into nodes first so that every error names its line. SQLMesh keys that have no meaning here
give a warning (an existing SQLMesh project must load unchanged); any other unknown key is most likely a typo
and is an error. The file is rendered as a Jinja template first (``env_var``, ``var``, ``user``), as SQLMesh does. A ``config.py``
is turned into the same data by ``project.config_python`` and read by the same reader.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.project.config import ProjectConfig
from dagster_sparkmesh.project.config.connection_overrides import apply_connection_overrides
from dagster_sparkmesh.project.config.python_file import read_python_config
from dagster_sparkmesh.project.config.reader import ConfigReader
from dagster_sparkmesh.project.config.sqlmesh_overrides import Overrides, deep_merge, read_overrides
from dagster_sparkmesh.project.config.template import render_config
from dagster_sparkmesh.records import Record

CONFIG_FILES = ("config.yaml", "config.yml")
PYTHON_CONFIG = "config.py"

class LoadedConfig(Record):
    config: ProjectConfig
    warnings: tuple[str, ...] = ()


def load_config(project_path: Path, *, gateway: str | None = None) -> LoadedConfig:
    """The project's config (``config.py`` and/or ``config.yaml``), SQLMesh's personal overlay and ``SQLMESH__``
    variables over it, ``gateway`` selected (as ``sqlmesh --gateway``), then the ``SPARKMESH_SPARK_*`` overrides.
    The project's ``.env`` is loaded into the environment first, over what it holds, as SQLMesh loads it."""
    _load_dotenv(project_path)
    loaded = _load_config_file(project_path, read_overrides(os.environ))
    selected = _select_gateway(loaded.config, gateway, project_path) if gateway is not None else loaded.config
    config = apply_connection_overrides(_with_gateway_model_defaults(selected), os.environ)
    return loaded if config is loaded.config else loaded.model_copy(update={"config": config})


def _load_dotenv(project_path: Path) -> None:
    """``<project>/.env`` (credentials, variables the config reads with ``env_var``), with python-dotenv's rules, as
    SQLMesh reads it (a dependency of Dagster's, so always installed with it)."""
    env_file = project_path / ".env"
    if env_file.is_file():
        from dotenv import load_dotenv

        load_dotenv(dotenv_path=env_file, override=True)


def _with_gateway_model_defaults(config: ProjectConfig) -> ProjectConfig:
    """The used gateway's ``model_defaults`` over the project's, key by key, as SQLMesh merges them."""
    gateway = config.gateways.get(config.default_gateway or "") if config.gateways else None
    own = gateway.model_defaults if gateway is not None else None
    if own is None:
        return config
    merged = config.model_defaults.model_copy(update={key: getattr(own, key) for key in own.model_fields_set})
    return config.model_copy(update={"model_defaults": merged})


def _select_gateway(config: ProjectConfig, gateway: str, project_path: Path) -> ProjectConfig:
    if gateway not in config.gateways:
        raise ConfigError(f"gateway {gateway!r} is not among the Spark gateways ({', '.join(config.gateways)})",
                          path=project_path, hint="name a gateway of the project, of ~/.sqlmesh/config.yaml or of SQLMESH__GATEWAYS__...")
    return config.model_copy(update={"default_gateway": gateway})


def _load_config_file(project_path: Path, overrides: Overrides) -> LoadedConfig:
    path = next((project_path / name for name in CONFIG_FILES if (project_path / name).is_file()), None)
    python_path = project_path / PYTHON_CONFIG
    if not python_path.is_file() and not overrides.data:
        if path is None:
            return LoadedConfig(config=ProjectConfig())
        reader = ConfigReader(path, _read_text(path))
        return LoadedConfig(config=reader.read(), warnings=tuple(reader.warnings))
    return _load_layers(python_path if python_path.is_file() else None, path, overrides, project_path)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path.name} is not valid UTF-8 (byte {error.object[error.start]:#04x} at offset {error.start})",
            path=path,
            hint="save the file as UTF-8 text",
        ) from None


def _load_layers(python_path: Path | None, yaml_path: Path | None, overrides: Overrides, project_path: Path) -> LoadedConfig:
    """config.yaml, config.py over it, then SQLMesh's overrides, read as one by the YAML reader (one set of checks).

    The text the reader sees is generated, so its messages name the file and the line of config.py's
    ``Config(...)`` (line 1 of config.yaml), and say which overrides took part.
    """
    data: dict[str, Any] = {}
    warnings: list[str] = []
    line = 1
    if yaml_path is not None:
        data = _yaml_data(yaml_path)
    if python_path is not None:
        loaded = read_python_config(python_path)
        if yaml_path is not None:
            warnings.append(f"{yaml_path.name} and {python_path.name} both exist: {python_path.name}'s settings override")
        data, line = {**data, **loaded.data}, loaded.line
    data = deep_merge(data, overrides.data)
    source = python_path or yaml_path or project_path / CONFIG_FILES[0]
    reader = ConfigReader(source, yaml.safe_dump(data, sort_keys=False), line=line)
    try:
        config = reader.read()
    except ConfigError as error:
        if overrides.sources:
            error.message += f" (with the overrides of {', '.join(overrides.sources)})"
        raise
    return LoadedConfig(config=config, warnings=tuple(warnings + reader.warnings))


def _yaml_data(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(render_config(_read_text(path), path).text) or {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise ConfigError(f"invalid YAML: {error}", path=path, line=mark.line + 1 if mark else None,
                          hint="check indentation and quoting") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path.name} must be a mapping", path=path, hint="write key: value pairs")
    return {str(key).lower(): value for key, value in data.items()}
