from __future__ import annotations

from datetime import datetime

import pytest
import sqlalchemy as sa
import sqlglot

from dagster_sparkmesh.errors import StateError
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.state import migrations, open_state_store, schema
from dagster_sparkmesh.state.connection import create_state_engine, ensure_schema, write_transaction
from dagster_sparkmesh.state.migrations import SCHEMA_VERSION
from dagster_sparkmesh.state.store import default_state_url


def _engine(state_location) -> sa.Engine:
    url = state_location.url or default_state_url(state_location.project_path)
    return create_state_engine(url, state_location.schema)


def _make_v1_database(state_location) -> None:
    """What dagster-sparkmesh with schema v1 (and an older sqlglot) left behind, written by hand."""
    engine = _engine(state_location)
    with write_transaction(engine) as connection:
        ensure_schema(connection, state_location.schema)
        migrations.MIGRATIONS[0](connection)
        connection.exec_driver_sql(
            "INSERT INTO _versions (id, schema_version, sqlglot_version, package_version, updated_at) "
            "VALUES (1, 1, '29.0.0', '0.0.1', '2024-01-01T00:00:00.000000')"
        )
        connection.exec_driver_sql(
            "INSERT INTO intervals (name, version, start_ts, end_ts, created_at) VALUES "
            "('db.a', 'v1', '2024-01-01T00:00:00.000000', '2024-01-03T00:00:00.000000', '2024-01-03T00:00:00.000000')"
        )
    engine.dispose()


def _columns(store) -> dict[str, set[str]]:
    inspector = sa.inspect(store.engine)
    return {name: {column["name"] for column in inspector.get_columns(name)} for name in inspector.get_table_names()}


def test_a_fresh_store_is_at_the_current_version(state_store):
    stamp = state_store.versions()
    assert (stamp.schema_version, stamp.sqlglot_version, stamp.package_version) == (
        SCHEMA_VERSION,
        sqlglot.__version__,
        migrations.package_version(),
    )
    assert SCHEMA_VERSION >= 2
    assert state_store.sqlglot_version_changed() is False


def test_a_v1_database_is_migrated_on_open_and_keeps_its_data(state_location):
    _make_v1_database(state_location)
    store = state_location.open()
    try:
        assert store.versions().schema_version == SCHEMA_VERSION
        current = {table.name: {column.name for column in table.columns} for table in schema.metadata.tables.values()}
        assert _columns(store) == current
        assert store.get_intervals("db.a", "v1") == [Interval(start=datetime(2024, 1, 1), end=datetime(2024, 1, 3))]
        store.record_plan_start("p1", "dev", "ann", "host1", "{}")
        assert [a.plan_id for a in store.list_plan_applications()] == ["p1"]
        assert store.sqlglot_version_changed() is True
        store.stamp_sqlglot_version()
        assert store.sqlglot_version_changed() is False
    finally:
        store.close()
    reopened = state_location.open()
    assert reopened.sqlglot_version_changed() is False
    reopened.close()


def test_a_newer_schema_is_refused_with_a_clear_message(state_location):
    store = state_location.open()
    with store.engine.begin() as connection:
        connection.execute(sa.update(schema.versions).values(schema_version=SCHEMA_VERSION + 5))
    store.close()
    with pytest.raises(StateError) as caught:
        state_location.open()
    assert (
        f"state schema v{SCHEMA_VERSION + 5} is newer than this dagster-sparkmesh (supports v{SCHEMA_VERSION}): "
        "upgrade the package"
    ) in str(caught.value)


def test_a_failing_migration_leaves_the_previous_version_intact(state_location, monkeypatch):
    state_location.open().close()

    def broken(connection: sa.Connection) -> None:
        connection.exec_driver_sql("CREATE TABLE half_done (id INTEGER)")
        connection.exec_driver_sql("DELETE FROM intervals")
        raise RuntimeError("migration bug")

    store = state_location.open()
    store.add_interval("db.a", "v1", Interval(start=datetime(2024, 1, 1), end=datetime(2024, 1, 2)))
    store.close()
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS, broken))
    monkeypatch.setattr(migrations, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with pytest.raises(RuntimeError, match="migration bug"):
        state_location.open()
    monkeypatch.undo()
    store = state_location.open()
    try:
        assert store.versions().schema_version == SCHEMA_VERSION
        assert "half_done" not in sa.inspect(store.engine).get_table_names()
        assert store.get_intervals("db.a", "v1") == [Interval(start=datetime(2024, 1, 1), end=datetime(2024, 1, 2))]
    finally:
        store.close()


def test_an_unreachable_server_is_a_state_error(tmp_path):
    with pytest.raises(StateError, match="cannot open the state store"):
        open_state_store("postgresql+psycopg2://postgres@127.0.0.1:1/test", tmp_path)


def test_the_default_store_is_a_sqlite_file_in_the_project(tmp_path):
    store = open_state_store(None, tmp_path / "project")
    try:
        assert (tmp_path / "project" / ".sparkmesh" / "state.db").is_file()
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
    finally:
        store.close()


def _snapshot_row(name: str, fingerprint: str, kind: str, parents: list[tuple[str, str]]) -> str:
    parent_json = ", ".join(f'{{"name": "{n}", "fingerprint": "{f}"}}' for n, f in parents)
    return (
        "INSERT INTO snapshots (name, fingerprint, version, kind_name, created_at, snapshot_json) VALUES "
        f"('{name}', '{fingerprint}', 'v{fingerprint}', '{kind}', '2024-01-01T00:00:00.000000', "
        f"'{{\"parents\": [{parent_json}]}}')"
    )


def test_v4_forgets_the_intervals_of_whole_tables_computed_from_project_models(state_location):
    """A v3 store may hold a FULL model complete for days its parents lacked when it ran: that cannot be known
    any more, so it is computed again; models reading only external tables, and incremental ones, keep theirs."""
    engine = _engine(state_location)
    with write_transaction(engine) as connection:
        ensure_schema(connection, state_location.schema)
        for migration in migrations.MIGRATIONS[:3]:
            migration(connection)
        connection.exec_driver_sql(
            "INSERT INTO _versions (id, schema_version, sqlglot_version, package_version, updated_at) "
            f"VALUES (1, 3, '{sqlglot.__version__}', '0.1.0', '2024-01-01T00:00:00.000000')"
        )
        rows = [
            _snapshot_row("raw.src", "e", "EXTERNAL", []),
            _snapshot_row("db.daily", "d", "INCREMENTAL_BY_TIME_RANGE", [("raw.src", "e")]),
            _snapshot_row("db.total", "t", "FULL", [("db.daily", "d")]),
            _snapshot_row("db.copy", "c", "FULL", [("raw.src", "e")]),
        ]
        for row in rows:
            connection.exec_driver_sql(row)
        for name, version in [("db.daily", "vd"), ("db.total", "vt"), ("db.copy", "vc")]:
            connection.exec_driver_sql(
                "INSERT INTO intervals (name, version, start_ts, end_ts, created_at) VALUES "
                f"('{name}', '{version}', '2024-01-01T00:00:00.000000', '2024-01-03T00:00:00.000000', "
                "'2024-01-03T00:00:00.000000')"
            )
    engine.dispose()
    store = state_location.open()
    try:
        days = [Interval(start=datetime(2024, 1, 1), end=datetime(2024, 1, 3))]
        assert store.get_intervals("db.total", "vt") == []
        assert store.get_intervals("db.daily", "vd") == days
        assert store.get_intervals("db.copy", "vc") == days
    finally:
        store.close()
