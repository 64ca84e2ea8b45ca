"""Open the SparkSession a project runs on: in-process (local), on an existing Spark Connect server (connect),
or on the project's own managed Connect server (managed).

Sessions are reused through an explicit cache keyed by everything that shapes them (mode, master or URL, project,
extra settings): booting a Hive session costs 5–10 s and a JVM can hold only one in-process SparkContext.
"""

from __future__ import annotations

import atexit
import logging
import os

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from py4j.protocol import Py4JError
from pyspark import SparkContext
from pyspark.sql import DataFrame, SparkSession

from dagster_sparkmesh.engine import class_archive
from dagster_sparkmesh.engine.connect_server import port_open, probe_query, server_dir, start_server
from dagster_sparkmesh.engine.idle_stop import mark_used
from dagster_sparkmesh.engine.lakehouse import with_lakehouse
from dagster_sparkmesh.engine.settings import (
    RUNTIME_SETTINGS, forget_hive_sessions, require_java, session_settings, warehouse_dir,
)
from dagster_sparkmesh.errors import ConfigError, EngineError
from dagster_sparkmesh.project.config import SparkConnection, state_dir

DEFAULT_CONNECT_PORT = 15002


@dataclass(frozen=True)
class SessionKey:
    mode: str
    address: str
    project: Path
    config: tuple[tuple[str, str], ...]


_sessions: dict[SessionKey, SparkSession] = {}


def session_key(connection: SparkConnection, project_path: Path) -> SessionKey:
    addresses = {
        "local": connection.master,
        "connect": connection.remote or "",
        "managed": f"{connection.master}@{connection.connect_port}",
    }
    return SessionKey(
        mode=connection.mode,
        address=addresses[connection.mode],
        project=Path(project_path).resolve(),
        config=tuple(sorted(connection.config.items())),
    )


def open_session(connection: SparkConnection, project_path: Path, table_format: str | None = None) -> SparkSession:
    """The project's session for ``connection``, reused when one with the same settings is still open;
    ``table_format``: the lakehouse format its tables are written in (``engine.lakehouse``), if any."""
    if table_format is not None:
        connection = connection.model_copy(update={"config": with_lakehouse(connection.config, table_format)})
    key = session_key(connection, project_path)
    cached = _sessions.get(key)
    if cached is not None and _is_open(cached):
        return cached
    session = _OPENERS[connection.mode](connection, Path(project_path).resolve())
    _quiet_query_context_logs()
    _sessions[key] = session
    return session


def _quiet_query_context_logs() -> None:
    """PySpark 4 prints every failed statement as an ERROR line with the JVM's stack trace: the engine reports
    failures itself (an EngineError naming the statement), and some statements fail on purpose (a look-up of a
    table that may not exist yet). A user's terminal should show the engine's message once, not pages of Java."""
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def close_sessions(project_path: Path | None = None) -> None:
    """Stop the sessions this process opened, all of them or only a project's (before stopping its server:
    a Connect client whose server is gone retries for a long time at exit)."""
    project = Path(project_path).resolve() if project_path is not None else None
    for key in [key for key in _sessions if project is None or key.project == project]:
        _sessions.pop(key).stop()
        if key.mode == "managed":
            mark_used(server_dir(key.project))  # the idle clock starts when the last client leaves


# A Connect session left to the garbage collector at interpreter exit closes its gRPC channel after gRPC's own
# threads are gone and waits forever: a Dagster step process would never exit. Close sessions while all is alive.
atexit.register(close_sessions)


def _open_local(connection: SparkConnection, project_path: Path) -> SparkSession:
    java = require_java()
    settings = session_settings(connection, project_path)
    _refuse_foreign_context(settings["spark.sql.warehouse.dir"])
    # The archive a managed server wrote serves a local JVM of the same Java and class path (it never writes one:
    # nothing waits for its exit).
    class_archive.add_archive(settings, java, may_write=False)
    state_dir(project_path).mkdir(parents=True, exist_ok=True)
    forget_hive_sessions(project_path)
    builder = SparkSession.builder.master(connection.master).appName(f"sparkmesh ({project_path.name})")
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        session = builder.enableHiveSupport().getOrCreate()
    except (Py4JError, RuntimeError) as error:  # pyspark raises a bare RuntimeError when the JVM dies at launch
        raise EngineError(
            f"could not start a local Spark session: {str(error).splitlines()[0] if str(error) else error!r}",
            hint="check that Java 17 works (`java -version`) and that no other process holds "
            f"{warehouse_dir(project_path).parent / 'metastore'} (embedded Derby allows one process; "
            "use mode: managed to share the catalog)",
        ) from error
    _quiet_jvm_logs(session)
    return session


def _quiet_jvm_logs(session: SparkSession) -> None:
    """Spark 4.1's listener of observed writes (``engine.counted_writes``) throws on every later statement that
    fails, also on look-ups that fail on purpose, and Spark logs each as an ERROR with pages of Java: the engine
    reports failures itself (an EngineError naming the statement)."""
    jvm = session.sparkContext._jvm
    levels, configurator = jvm.org.apache.logging.log4j.Level, jvm.org.apache.logging.log4j.core.config.Configurator
    configurator.setLevel("org.apache.spark.sql.util.ExecutionListenerBus", levels.OFF)
    # Iceberg's metastore client (``engine.lakehouse``) warns of each database it looks up before creating it.
    for name in _CHATTY_METASTORE_LOGGERS:
        configurator.setLevel(name, levels.ERROR)


_CHATTY_METASTORE_LOGGERS = ("org.apache.hadoop.hive.metastore.ObjectStore", "com.zaxxer.hikari.util.DriverDataSource")


def _local_path(location: str | None) -> str | None:
    return location.removeprefix("file:") if location else location


def _refuse_foreign_context(warehouse: str) -> None:
    """A JVM holds one SparkContext, whose warehouse and metastore cannot change: never silently reuse another."""
    active = SparkContext._active_spark_context
    if active is None:
        return
    current = active.getConf().get("spark.sql.warehouse.dir")
    # Spark qualifies the warehouse (``file:/...``) once the catalog is first used: the same folder either way.
    if _local_path(current) != _local_path(warehouse):
        raise EngineError(
            "this process already runs a local Spark session for another warehouse",
            snippet=f"running: {current}\nwanted:  {warehouse}",
            hint="one local session per process: stop the other session first, or use mode: managed",
        )


def _open_connect(connection: SparkConnection, project_path: Path) -> SparkSession:
    if not connection.remote:
        raise ConfigError(
            "connection mode 'connect' needs a remote URL",
            hint="set gateways.<name>.connection.remote to sc://host:port (or use mode: managed)",
        )
    return _connect(connection.remote)


def _open_managed(connection: SparkConnection, project_path: Path) -> SparkSession:
    status = start_server(project_path, connection, probe_running=False)
    session = _connect(status.url or "")
    if status.answered:  # launched for this call, and it answered a query then
        return session
    try:
        probe_query(status.url or "", session)  # a reused server listens; this says it serves
    except EngineError:
        session.stop()
        raise
    return session


def _connect(url: str) -> SparkSession:
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    parsed = urlparse(url.replace("sc://", "http://", 1))
    host, port = parsed.hostname or "localhost", parsed.port or DEFAULT_CONNECT_PORT
    # Check the port first: the gRPC client retries an unreachable server for minutes before failing.
    if not port_open(port, host=host, timeout=3.0):
        raise EngineError(
            f"the Spark Connect server at {url} is unreachable",
            hint="start it (`sparkmesh spark start` for mode: managed) or fix connection.remote in config.yaml",
        )
    # pyspark.sql.functions picks its Connect implementation from this process-wide variable; without it, F.col in
    # users' Python models looks for a local SparkContext and fails. A process that already runs a local session
    # (tests mixing both) keeps the local implementation, and so do the processes it starts.
    if SparkContext._active_spark_context is None:
        os.environ.setdefault("SPARK_CONNECT_MODE_ENABLED", "1")
    builder = ConnectSession.builder.remote(url)
    for key, value in RUNTIME_SETTINGS.items():
        builder = builder.config(key, value)
    return builder.create()


def is_connect(session_or_frame: object) -> bool:
    """A Spark Connect session (or one of its DataFrames), not an in-process one."""
    return type(session_or_frame).__module__.startswith("pyspark.sql.connect")


def query_frame(spark: SparkSession, select_sql: str) -> DataFrame:
    """The rows of ``select_sql`` as a frame to write or name. Over Spark Connect a lazy one: ``spark.sql`` there
    runs the text at once to learn whether it is a command, a round trip and an analysis that the frame's first
    use repeats. In-process, ``spark.sql`` analyzes without a round trip."""
    if not is_connect(spark):
        return spark.sql(select_sql)
    from pyspark.sql.connect.dataframe import DataFrame as ConnectFrame
    from pyspark.sql.connect.plan import SQL

    return ConnectFrame(SQL(select_sql), spark)


def _is_open(session: SparkSession) -> bool:
    stopped = getattr(session, "is_stopped", None)
    if stopped is not None:  # Spark Connect session
        return not stopped
    return SparkContext._active_spark_context is not None and session.sparkContext._jsc is not None


_OPENERS: dict[str, Callable[[SparkConnection, Path], SparkSession]] = {
    "local": _open_local,
    "connect": _open_connect,
    "managed": _open_managed,
}
