"""``sqlmesh.core.config``: the configuration classes a ``config.py`` builds.

Each class only records its keyword arguments and the line that built it; ``project.config_python`` turns the
tree into the typed ``ProjectConfig`` (reporting what it ignores, naming that line). Any other ``*Config`` class
of SQLMesh (other engines' connections, notification targets, linter, users ...) is provided on demand by
``__getattr__`` so that a ``config.py`` importing it loads; it is reported as ignored where it is used. The same
module stands for ``sqlmesh.core.notification_target`` and ``sqlmesh.core.user`` (``User``, ``UserRole``, targets).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Any


class ConfigSection:
    """A configuration object: its class name says what it is, ``fields`` what was written."""

    def __init__(self, *args: Any, **fields: Any) -> None:
        if args:
            raise TypeError(f"{type(self).__name__} takes keyword arguments only")
        self.fields = fields
        caller = sys._getframe(1)  # where the user built it, for messages
        self.path = caller.f_code.co_filename
        self.line = caller.f_lineno

    def __getattr__(self, name: str) -> Any:
        fields = self.__dict__.get("fields", {})
        if name in fields:
            return fields[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.fields.items())})"

    def copy(self, update: dict[str, Any] | None = None) -> ConfigSection:
        clone = type(self)(**{**self.fields, **(update or {})})
        clone.path, clone.line = self.path, self.line
        return clone

    model_copy = copy


class _SectionType(type):
    """Enum-like members on any configuration class: ``UserRole.REQUIRED_APPROVER`` is ``"required_approver"``;
    any other public name is a named constructor (``CategorizerConfig.all_full()``), recorded as ``constructor``."""

    def __getattr__(cls, name: str) -> Any:
        if name.isupper():
            return name.lower()
        if name.startswith("_"):
            raise AttributeError(name)

        def named_constructor(**fields: Any) -> ConfigSection:
            section = cls(**fields)
            caller = sys._getframe(1)  # the user's line, not this function's
            section.path, section.line = caller.f_code.co_filename, caller.f_lineno
            section.constructor = name
            return section

        return named_constructor


def _section(name: str) -> type[ConfigSection]:
    return _SectionType(name, (ConfigSection,), {"__module__": __name__})


Config = _section("Config")
GatewayConfig = _section("GatewayConfig")
ModelDefaultsConfig = _section("ModelDefaultsConfig")
SparkConnectionConfig = _section("SparkConnectionConfig")
SQLiteConnectionConfig = _section("SQLiteConnectionConfig")
PostgresConnectionConfig = _section("PostgresConnectionConfig")
DuckDBConnectionConfig = _section("DuckDBConnectionConfig")
NameInferenceConfig = _section("NameInferenceConfig")
LinterConfig = _section("LinterConfig")
PlanConfig = _section("PlanConfig")
CategorizerConfig = _section("CategorizerConfig")


class AutoCategorizationMode(StrEnum):
    FULL = "full"
    SEMI = "semi"
    OFF = "off"


class EnvironmentSuffixTarget(StrEnum):
    SCHEMA = "schema"
    TABLE = "table"
    CATALOG = "catalog"


_SECTIONS: dict[str, type[ConfigSection]] = {}


def __getattr__(name: str) -> type[ConfigSection]:
    """Any other configuration class name (``SnowflakeConnectionConfig``, ``SlackWebhookNotificationTarget`` ...)."""
    if name.startswith("_") or not name[:1].isupper():
        raise AttributeError(name)
    return _SECTIONS.setdefault(name, _section(name))


__all__ = [
    "ConfigSection", "Config", "GatewayConfig", "ModelDefaultsConfig", "SparkConnectionConfig",
    "SQLiteConnectionConfig", "PostgresConnectionConfig", "DuckDBConnectionConfig", "NameInferenceConfig",
    "LinterConfig", "PlanConfig", "CategorizerConfig", "AutoCategorizationMode", "EnvironmentSuffixTarget",
    "__getattr__",
]  # fmt: skip
