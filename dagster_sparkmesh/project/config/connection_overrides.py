"""Environment variables that override the Spark connection of ``config.yaml``.

The same project runs on a laptop and on a cluster: only where Spark is changes, so that is set by the deployment
(environment variables), not by editing the project. Each variable replaces one field of the default gateway's
``connection``; an unset or empty variable leaves the field as configured. Precedence: a Dagster resource's
explicit fields, then these variables, then ``config.yaml``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import get_args

from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.project.config import EngineMode, GatewayConfig, ProjectConfig, SparkConnection

MODE = "SPARKMESH_SPARK_MODE"
MASTER = "SPARKMESH_SPARK_MASTER"
REMOTE = "SPARKMESH_SPARK_REMOTE"
CONNECT_PORT = "SPARKMESH_SPARK_CONNECT_PORT"
CONF = "SPARKMESH_SPARK_CONF"
IDLE_TIMEOUT = "SPARKMESH_SPARK_IDLE_TIMEOUT"
CONCURRENT_TASKS = "SPARKMESH_SPARK_CONCURRENT_TASKS"
VARIABLES = (MODE, MASTER, REMOTE, CONNECT_PORT, CONF, IDLE_TIMEOUT, CONCURRENT_TASKS)


def apply_connection_overrides(config: ProjectConfig, environ: Mapping[str, str]) -> ProjectConfig:
    """``config`` with the default gateway's connection updated from ``environ``; unchanged when none is set."""
    updates = connection_updates(config.connection, environ)
    if not updates:
        return config
    gateway = config.gateways.get(config.default_gateway) or GatewayConfig()
    connection = SparkConnection.model_validate({**config.connection.model_dump(), **updates})
    gateways = {**config.gateways, config.default_gateway: gateway.model_copy(update={"connection": connection})}
    return config.model_copy(update={"gateways": gateways})


def connection_updates(connection: SparkConnection, environ: Mapping[str, str]) -> dict[str, object]:
    """The connection fields the environment sets, validated (a bad value names its variable)."""
    updates: dict[str, object] = {}
    if value := environ.get(MODE, "").strip():
        if value not in get_args(EngineMode):
            raise _bad(MODE, value, f"use one of {', '.join(get_args(EngineMode))}")
        updates["mode"] = value
    if value := environ.get(MASTER, "").strip():
        updates["master"] = value
    if value := environ.get(REMOTE, "").strip():
        if not value.startswith("sc://"):
            raise _bad(REMOTE, value, "write a Spark Connect URL: sc://host:15002")
        updates["remote"] = value
    if value := environ.get(CONNECT_PORT, "").strip():
        updates["connect_port"] = _port(value)
    if value := environ.get(IDLE_TIMEOUT, "").strip():
        if not value.isdigit():
            raise _bad(IDLE_TIMEOUT, value, "write whole seconds (0: the managed server never stops by itself)")
        updates["idle_timeout"] = int(value)
    if value := environ.get(CONCURRENT_TASKS, "").strip():
        if not value.isdigit() or int(value) < 1:
            raise _bad(CONCURRENT_TASKS, value, "write how many models may be written at once (1 or more)")
        updates["concurrent_tasks"] = int(value)
    if value := environ.get(CONF, "").strip():
        updates["config"] = {**connection.config, **_spark_conf(value)}
    return updates


def _port(value: str) -> int:
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise _bad(CONNECT_PORT, value, "write a TCP port number between 1 and 65535")
    return int(value)


def _spark_conf(value: str) -> dict[str, str]:
    hint = 'write a JSON object of Spark settings: {"spark.executor.memory": "2g"}'
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as error:
        raise _bad(CONF, value, f"{hint} ({error.msg} at character {error.pos})") from None
    if not isinstance(parsed, dict):
        raise _bad(CONF, value, hint)
    # Spark settings are strings; JSON's true/1 become "true"/"1" as they would in config.yaml.
    return {str(key): str(item).lower() if isinstance(item, bool) else str(item) for key, item in parsed.items()}


def _bad(variable: str, value: str, hint: str) -> ConfigError:
    return ConfigError(f"invalid value of the environment variable {variable}", snippet=f"{variable}={value}", hint=hint)
