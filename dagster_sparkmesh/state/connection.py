"""SQLAlchemy engines for the state store and the two kinds of transaction it runs.

SQLite: WAL journal (readers don't block the writer), a 30 s busy timeout, and ``BEGIN IMMEDIATE`` for writes so
two processes take the write lock up front and serialize, instead of both reading and then failing to upgrade
their lock. pysqlite's own implicit transactions are switched off so that SQLAlchemy's ``begin`` decides.
PostgreSQL: an optional schema selected through ``search_path``; write transactions that must see a consistent
row lock it themselves (``SELECT ... FOR UPDATE``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

from dagster_sparkmesh.errors import StateError
from dagster_sparkmesh.snapshot.naming import validate_identifier

BUSY_TIMEOUT_SECONDS = 30
_WRITE = "sparkmesh_write"


def create_state_engine(url: str, schema: str | None = None) -> sa.Engine:
    parsed = sa.make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed)
    if parsed.get_backend_name() == "postgresql":
        return _postgres_engine(parsed, schema)
    raise StateError(
        f"unsupported state store {parsed.render_as_string(hide_password=True)!r}",
        hint="use a sqlite:/// file or a postgresql+psycopg2:// URL",
    )


def _sqlite_engine(url: sa.URL) -> sa.Engine:
    in_memory = url.database in (None, "", ":memory:")
    if not in_memory:
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    options: dict = {"connect_args": {"timeout": BUSY_TIMEOUT_SECONDS}}
    if in_memory:
        # One shared connection, or every checkout would see a different empty database.
        options.update(poolclass=sa.StaticPool, connect_args={"check_same_thread": False})
    engine = sa.create_engine(url, **options)

    @sa.event.listens_for(engine, "connect")
    def _configure(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_SECONDS * 1000}")
        if not in_memory:
            _use_wal(cursor)
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(connection: sa.Connection) -> None:
        immediate = connection.get_execution_options().get(_WRITE, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def _use_wal(cursor: sqlite3.Cursor) -> None:
    """WAL is a property of the database file, set by the first connection. Switching to it takes an exclusive lock
    for which SQLite does not call the busy handler: a connection that meets another one doing the same gets
    "database is locked" at once, so it looks again (the other one has usually switched it by then) and retries."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _postgres_engine(url: sa.URL, schema: str | None) -> sa.Engine:
    connect_args = {}
    if schema is not None:
        connect_args["options"] = f"-csearch_path={validate_identifier(schema, 'state schema')}"
    return sa.create_engine(url, connect_args=connect_args, pool_pre_ping=True)


def ensure_schema(connection: sa.Connection, schema: str | None) -> None:
    if schema is not None and connection.dialect.name == "postgresql":
        connection.exec_driver_sql(f'CREATE SCHEMA IF NOT EXISTS "{validate_identifier(schema, "state schema")}"')


def lock_for_migration(connection: sa.Connection) -> None:
    """Serialize concurrent first opens on PostgreSQL (SQLite's IMMEDIATE transaction already does)."""
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql("SELECT pg_advisory_xact_lock(7364251)")


@contextmanager
def write_transaction(engine: sa.Engine) -> Iterator[sa.Connection]:
    """One transaction that commits on success and rolls back entirely on any exception."""
    with engine.connect() as connection:
        connection.execution_options(**{_WRITE: True})
        with connection.begin():
            yield connection


@contextmanager
def read_transaction(engine: sa.Engine) -> Iterator[sa.Connection]:
    with engine.connect() as connection, connection.begin():
        yield connection
