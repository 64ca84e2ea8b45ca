"""What every execution step needs: the project, the state store, a lazily opened Spark engine and the clock.

The engine is opened on first use only, so that planning (and a no-op plan) never starts a JVM.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from dagster_sparkmesh.clock import utc_now
from dagster_sparkmesh.execution.retry import DEFAULT_POLICY, RetryPolicy
from dagster_sparkmesh.model.table_formats import project_lakehouse_format
from dagster_sparkmesh.project.config import SparkConnection
from dagster_sparkmesh.project.records import Project

if TYPE_CHECKING:
    from dagster_sparkmesh.engine.adapter import SparkEngine
    from dagster_sparkmesh.state.store import StateStore


@dataclass
class ExecutionContext:
    project: Project
    state: StateStore
    environment: str
    engine_factory: Callable[[], SparkEngine]
    clock: Callable[[], datetime] = utc_now
    max_workers: int = 2
    retry_policy: RetryPolicy = DEFAULT_POLICY
    """How often a model's write is retried after a transient failure (lost Connect session, metastore lock)."""
    partial_intervals: bool = True
    """Whether plans compute the interval so far of ``allow_partials`` models; Dagster's partitions are whole
    intervals, so its steps and promotions plan whole ones only."""
    _engine: SparkEngine | None = field(default=None, repr=False)

    @property
    def engine(self) -> SparkEngine:
        if self._engine is None:
            self._engine = self.engine_factory()
        return self._engine

    @property
    def engine_started(self) -> bool:
        return self._engine is not None

    def close(self) -> None:
        """Close the state store, and a Spark Connect session this context opened.

        A Connect session left to the garbage collector closes its gRPC channel from ``__del__`` at interpreter
        exit, which can hang the process; a local session stays up, since the process owns one JVM for good.
        """
        self.state.close()
        if self._engine is None:
            return
        from dagster_sparkmesh.engine.session import close_sessions, is_connect

        if is_connect(self._engine.spark):
            close_sessions(self.project.runtime_path)
            self._engine = None

    @classmethod
    def open(
        cls,
        project_path: Path | str,
        environment: str = "prod",
        *,
        state_url: str | None = None,
        connection: SparkConnection | None = None,
        project: Project | None = None,
        engine_factory: Callable[[], SparkEngine] | None = None,
        on_engine_open: Callable[[SparkEngine], None] | None = None,
        clock: Callable[[], datetime] | None = None,
        max_workers: int | None = None,
        partial_intervals: bool = True,
    ) -> ExecutionContext:
        """The one way the CLI, Dagster's resource and the Python API build a context.

        ``engine_factory``: how the engine is opened (default: a session of ``connection``, else the project's);
        ``on_engine_open``: run once on the engine when it first opens (Dagster's CSV sources), still lazily;
        ``clock``: the command's "now" (SQLMesh's ``--execution-time``); ``max_workers``: models written at once
        (default: the connection's); ``partial_intervals``: False in Dagster (``ExecutionContext.partial_intervals``)."""
        from dagster_sparkmesh.project.loader import load_project
        from dagster_sparkmesh.snapshot.naming import validate_identifier
        from dagster_sparkmesh.state.store import open_state_store

        project = project or load_project(project_path)
        environment = validate_identifier(environment, "environment name")
        spark_connection = connection or project.config.connection
        open_engine = engine_factory or _session_engine(spark_connection, project)
        state = open_state_store(state_url or project.config.state.url, project.runtime_path)

        def engine() -> SparkEngine:
            opened = open_engine()
            if on_engine_open is not None:
                on_engine_open(opened)
            return opened

        return cls(
            project=project, state=state, environment=environment, engine_factory=engine,
            clock=clock or utc_now, max_workers=max_workers or spark_connection.workers,
            partial_intervals=partial_intervals,
        )


def _session_engine(connection: SparkConnection, project: Project) -> Callable[[], SparkEngine]:
    def open_engine() -> SparkEngine:
        from dagster_sparkmesh.engine.adapter import SparkEngine
        from dagster_sparkmesh.engine.session import open_session

        return SparkEngine(open_session(connection, project.runtime_path, project_lakehouse_format(project.models.values())))

    return open_engine
