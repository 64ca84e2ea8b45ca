"""``config.py`` → the same configuration data as ``config.yaml``, read as SQLMesh reads it.

The file runs inside ``project_imports`` (so ``from sqlmesh.core.config import Config, ...`` works without
SQLMesh) and must bind ``config`` to a ``Config(...)``. The object tree is turned into plain data with YAML's
shape (connection classes become ``type:`` keys) and handed to the YAML reader, so both files share every check,
default and warning (a gateway whose connection is not Spark is left out there, with a warning).
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from types import ModuleType
from typing import Any

from dagster_sparkmesh.errors import ConfigError, ProjectError
from dagster_sparkmesh.sqlmesh_api.config_classes import ConfigSection
from dagster_sparkmesh.sqlmesh_api.importer import project_imports

CONFIG_VARIABLE = "config"
_CONNECTION_TYPE = re.compile(r"^(\w+?)ConnectionConfig$")


@dataclass(frozen=True)
class PythonConfig:
    """``config.py`` as YAML-shaped data, with the line of its ``Config(...)`` call."""

    data: dict[str, Any]
    line: int


def read_python_config(path: Path) -> PythonConfig:
    module = _run(path)
    config = vars(module).get(CONFIG_VARIABLE)
    if type(config).__name__ != "Config" or not isinstance(config, ConfigSection):
        raise ConfigError(
            f"config.py must bind {CONFIG_VARIABLE!r} to a Config(...) object"
            + (f", not {type(config).__name__}" if config is not None else ""),
            path=path,
            hint="write: from sqlmesh.core.config import Config\nconfig = Config(model_defaults=ModelDefaultsConfig(dialect=\"spark\"))",
        )
    data = {key: _plain(value) for key, value in config.fields.items()}
    if "gateways" in data:
        data["gateways"] = _gateways(config.fields["gateways"], path)
    return PythonConfig(data=data, line=config.line)


def _run(path: Path) -> ModuleType:
    source = path.read_text(encoding="utf-8")
    module = ModuleType("sparkmesh_project_config")
    module.__file__ = str(path)
    try:
        with project_imports(path.parent):
            exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - the project's own config
    except SyntaxError as error:
        if Path(error.filename or "") != path:  # a module config.py imports: reported as what config.py raised
            raise _raised(path, error) from error
        raise ConfigError(f"syntax error: {error.msg}", path=path, line=error.lineno, snippet=error.text,
                          hint="fix the Python syntax") from None
    except ProjectError:  # ours already, config.py's own line included (a ConfigError, or its code ending the process)
        raise
    except Exception as error:
        raise _raised(path, error) from error
    return module


def _raised(path: Path, error: Exception) -> ConfigError:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename) == path]
    return ConfigError(
        f"running config.py raised {type(error).__name__}: {error}",
        path=path,
        line=frames[-1].lineno if frames else None,
        snippet=frames[-1].line if frames else None,
        hint="config.py runs when the project loads; see the SQLMesh configuration classes sparkmesh provides",
    )


def _plain(value: Any) -> Any:
    """Configuration objects as YAML-shaped data; anything else that YAML cannot hold as its text."""
    if isinstance(value, ConfigSection):
        kind = _connection_type(value)
        fields = {key: _plain(item) for key, item in value.fields.items()}
        return {"type": kind, **fields} if kind else fields
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "as_dict"):  # a kind object in model_defaults
        return _plain(value.as_dict())
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _connection_type(section: ConfigSection) -> str | None:
    match = _CONNECTION_TYPE.match(type(section).__name__)
    return match.group(1).lower() if match else None


def _gateways(gateways: Any, path: Path) -> dict[str, Any]:
    if isinstance(gateways, ConfigSection):  # SQLMesh accepts one gateway without a name
        gateways = {"default": gateways}
    if not isinstance(gateways, dict):
        raise ConfigError("config.py: gateways must be a dict of name to GatewayConfig(...)", path=path,
                          hint='write gateways={"spark": GatewayConfig(connection=SparkConnectionConfig())}')
    return {str(name): _plain(gateway) for name, gateway in gateways.items()}
