"""Typed project configuration (``config.yaml``), SQLMesh's keys where they apply.

Parsing the YAML (with line numbers for errors, warnings for SQLMesh keys that don't apply here) lives in
``project.config_loader``; these are only the records.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, get_args

from pydantic import Field, JsonValue

from dagster_sparkmesh.errors import ConfigError
from dagster_sparkmesh.records import Record

EngineMode = Literal["local", "managed", "connect"]
"""local: in-process SparkSession (Hive catalog, embedded Derby: one process at a time);
managed (the default): a Spark Connect server that sparkmesh starts on 127.0.0.1 on first need, shares between
processes and stops once idle;
connect: an existing Spark Connect server (``remote: sc://host:port``)."""


DEFAULT_MODE_VARIABLE = "SPARKMESH_SPARK_DEFAULT_MODE"


def default_mode() -> EngineMode:
    """``managed``, or the mode ``SPARKMESH_SPARK_DEFAULT_MODE`` names: the mode of projects whose configuration
    sets none (a machine that should run Spark in-process by default; ``SPARKMESH_SPARK_MODE`` overrides even a
    configured mode)."""
    value = os.environ.get(DEFAULT_MODE_VARIABLE, "").strip() or "managed"
    if value not in get_args(EngineMode):
        raise ConfigError(
            f"invalid value of the environment variable {DEFAULT_MODE_VARIABLE}",
            snippet=f"{DEFAULT_MODE_VARIABLE}={value}",
            hint=f"use one of {', '.join(get_args(EngineMode))}",
        )
    return value  # type: ignore[return-value]


class ModelDefaults(Record):
    infer_names: bool = False
    """SQLMesh's ``model_naming.infer_names``: a model without a name is ``schema.table`` of its folder and file."""
    dialect: str = "spark"
    start: str | None = None
    cron: str = "@daily"
    cron_tz: str | None = None
    interval_unit: str | None = None
    allow_partials: bool = False
    owner: str | None = None
    batch_size: int | None = None
    batch_concurrency: int | None = None
    on_destructive_change: str | None = None
    on_additive_change: str | None = None
    """What a forward-only change may do to an incremental model's columns where its kind does not say."""
    table_format: str | None = None
    storage_format: str | None = None
    physical_properties: tuple[tuple[str, str], ...] = ()
    """(key, value) table properties of every lakehouse table, under each model's own (``Model``)."""
    session_properties: tuple[tuple[str, str], ...] = ()
    """(key, value) Spark settings every model runs with, under each model's own (as SQLMesh merges them)."""
    enabled: bool = True
    audits: tuple[str, ...] = ()
    """Audit calls every model runs before its own (``not_null(columns := [id])``), as SQLMesh adds them."""
    kind: str | None = None
    """The kind of SQL models whose header names none, as a header writes it (``FULL``, ``INCREMENTAL_BY_TIME_RANGE
    (time_column ds)``); None: VIEW, SQLMesh's default."""
    pre_statements: tuple[str, ...] = ()
    """SQL statements run before every model's own (as SQLMesh puts them first), in the model's dialect."""
    post_statements: tuple[str, ...] = ()
    on_virtual_update: tuple[str, ...] = ()

    @property
    def kind_fields(self) -> dict[str, object]:
        """The kind fields set here (None: not set), for the kinds that take them (``model.kinds``)."""
        return {"batch_size": self.batch_size or None, "batch_concurrency": self.batch_concurrency,
                "on_destructive_change": self.on_destructive_change, "on_additive_change": self.on_additive_change}


class SparkConnection(Record):
    type: Literal["spark"] = "spark"
    mode: EngineMode = Field(default_factory=lambda: default_mode())
    """Default ``managed``: the first command that needs Spark starts the project's Connect server, the
    following ones connect to it (no JVM start each); ``local`` runs Spark inside each process instead."""
    remote: str | None = None
    """Spark Connect URL for mode=connect (``sc://host:port``)."""
    master: str = "local[2]"
    """For mode=local (and the managed server): ``local[N]``, ``spark://host:7077``, ``yarn``, ``k8s://...``."""
    connect_port: int | None = None
    """Port of the managed Spark Connect server; None: a free port chosen when the server starts (recorded with
    it), so that each project on a machine has its own."""
    idle_timeout: int = Field(default=1800, ge=0)
    """Seconds without a client after which the managed server stops itself (0: it runs until ``spark stop``)."""
    config: dict[str, str] = Field(default_factory=dict)
    """Extra Spark configuration (``spark.*`` keys)."""
    concurrent_tasks: int | None = Field(default=None, ge=1)
    """Models computed at once (SQLMesh's key). Default: 4 through Spark Connect, where each statement waits on
    round trips that others can overlap (a daily run of 30 models: 22.3 s with 2, 19.5 s with 4, measured);
    2 in local mode, where the threads share one in-process driver."""

    @property
    def workers(self) -> int:
        return self.concurrent_tasks or (2 if self.mode == "local" else 4)


class StateConnection(Record):
    type: Literal["sqlite", "postgres"] = "sqlite"
    url: str | None = None
    """SQLAlchemy URL; for sqlite the default is ``<project>/.sparkmesh/state.db``."""


class GatewayConfig(Record):
    connection: SparkConnection = Field(default_factory=SparkConnection)
    state_connection: StateConnection | None = None
    model_defaults: ModelDefaults | None = None
    """The gateway's own defaults: the keys it sets win over the project's when the project runs on it."""


class PlanDefaults(Record):
    """SQLMesh's ``plan:`` section, the part that means something here."""

    include_unmodified: bool = False
    """A development environment gets a view of every model (True), or, as in SQLMesh by default, views of the
    models changed in it only (those that differ from the environment it was created from or last planned as,
    and those that got a view before). Production always has every view."""


class ProjectConfig(Record):
    model_defaults: ModelDefaults = Field(default_factory=ModelDefaults)
    gateways: dict[str, GatewayConfig] = Field(default_factory=lambda: {"local": GatewayConfig()})
    default_gateway: str = "local"
    state_connection: StateConnection | None = None
    environment_ttl: str = "in 1 week"
    snapshot_ttl: str = "in 1 week"
    plan: PlanDefaults = Field(default_factory=PlanDefaults)
    default_target_environment: str = "prod"
    """The environment ``plan`` and ``run`` act on when the command names none, as in SQLMesh."""
    preview_days: int = Field(default=1, ge=1)
    """A forward-only change planned in a development environment without ``--start`` is previewed over the
    last ``preview_days`` days before the plan's end (at least the model's last complete interval)."""
    variables: dict[str, JsonValue] = Field(default_factory=dict)
    """Config variables: any JSON-like value, as in SQLMesh (``@VAR``, ``@EACH``, ``context.var``)."""
    before_all: tuple[str, ...] = ()
    """SQL run once before each plan application (and Dagster step), macros allowed (``@this_env``, ``@views``)."""
    after_all: tuple[str, ...] = ()
    """SQL run once after each plan application (and Dagster step) completed."""
    default_catalog: str | None = None
    """The default catalog of the default gateway when it is a DuckDB one (left out: not Spark): SQLMesh resolves
    ``<catalog>.schema.table`` as ``schema.table`` there, so the loader drops that catalog from the models' SQL."""

    @property
    def gateway(self) -> GatewayConfig:
        return self.gateways.get(self.default_gateway) or GatewayConfig()

    @property
    def connection(self) -> SparkConnection:
        return self.gateway.connection

    @property
    def state(self) -> StateConnection:
        return self.gateway.state_connection or self.state_connection or StateConnection()


def state_dir(project_path: Path) -> Path:
    """Where generated files live: cache, SQLite state, local warehouse, Spark server pid and logs."""
    return project_path / ".sparkmesh"
