"""The managed Spark Connect server, on a project of its own (its Derby metastore can't be shared with the
in-process test session)."""

import os
import socket
import time
from datetime import date, datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.engine.adapter import SparkEngine
from dagster_sparkmesh.engine.counted_writes import RowChecks
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.engine.local_filesystem import CLASS_NAME
from dagster_sparkmesh.engine.connect_server import server_status, start_server, stop_server
from dagster_sparkmesh.engine.session import close_sessions, open_session
from dagster_sparkmesh.project.config import SparkConnection
from dagster_sparkmesh.engine.partition_sql import TimeWindow


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.usefixtures("spark")  # the local session before any Connect one: see tests/reliability/conftest.py
def test_managed_server_start_query_reuse_and_stop(tmp_path):
    connection = SparkConnection(mode="managed", master="local[2]", connect_port=_free_port())
    try:
        began = time.monotonic()
        status = start_server(tmp_path, connection)
        print(f"connect server start: {time.monotonic() - began:.1f} s")
        assert status.running and status.url == f"sc://127.0.0.1:{connection.connect_port}"
        assert status.log_path.exists()
        # The launch saw the server answer a query, so the session opened for this call need not ask again; a
        # reuse has not seen it (and the record never says it: a later caller has not seen it either).
        reused = start_server(tmp_path, connection)
        assert reused.pid == status.pid  # reused, not a second server
        assert status.answered and not reused.answered and not server_status(tmp_path).answered

        engine = SparkEngine(open_session(connection, tmp_path))
        engine.catalog.create_schema("s")
        table = "s.daily"
        query = "SELECT * FROM VALUES (1, DATE'2024-01-01'), (2, DATE'2024-01-02') AS t(id, ds)"
        engine.creation.create_table_like_query(table, query, ["ds"])
        engine.overwrite_interval(table, query, TimeWindow("ds", datetime(2024, 1, 1), datetime(2024, 1, 3)))
        engine.overwrite_interval(
            table, "SELECT 3 AS id, DATE'2024-01-01' AS ds", TimeWindow("ds", datetime(2024, 1, 1), datetime(2024, 1, 3)),
        )
        assert engine.catalog.query_rows(f"SELECT * FROM {table}") == [(3, date(2024, 1, 1))]
        # A fresh write counts the rows of its window as it writes them, over Connect too.
        engine.creation.create_table_like_query("s.fresh", query, ["ds"])
        window = TimeWindow("ds", datetime(2024, 1, 2), datetime(2024, 1, 3))
        assert engine.overwrite_interval("s.fresh", query, window, fresh=True) == 1
        assert engine.catalog.table_exists(table) and not engine.catalog.table_exists("s.missing")
        engine.upsert_by_key(table, "SELECT 4 AS id, DATE'2024-01-05' AS ds", ["id"])
        engine.catalog.create_or_alter_view("s.v", f"SELECT * FROM {table}")
        engine.catalog.create_or_alter_view("s.v", f"SELECT id FROM {table}")
        assert sorted(engine.catalog.query_rows("SELECT * FROM s.v")) == [(3,), (4,)]
        one_day = TimeWindow("ds", datetime(2024, 1, 1), datetime(2024, 1, 2))
        assert engine.overwrite_interval(table, "SELECT 5 AS id, DATE'2024-01-01' AS ds", one_day) == 1
        assert sorted(engine.catalog.query_rows("SELECT * FROM s.v")) == [(4,), (5,)]
        # A period table's write counts its rows and its row checks (audits) as it writes them; a CTAS too.
        monthly = TimeWindow("ds", datetime(2024, 1, 1), datetime(2024, 1, 3), period="month")
        assert engine.creation.create_interval_table("s.monthly", query, monthly) is True
        checks = RowChecks({0: "id = 2"})
        assert engine.overwrite_interval("s.monthly", query, monthly, new=True, checks=checks) == 2
        assert checks.holding == {0: 1} and engine.catalog.view_exists("s.monthly")
        assert engine.creation.create_table_with_rows("s.full", query) == 2
        with pytest.raises(EngineError, match="UNRESOLVED_COLUMN") as refused:  # the lazy frame's error, as before
            engine.overwrite_interval("s.monthly", "SELECT nope AS id, DATE'2024-01-01' AS ds", monthly)
        assert "INSERT INTO" in refused.value.snippet
        assert (tmp_path / ".sparkmesh" / "warehouse" / "s.db" / "daily").is_dir()
        assert engine.spark.conf.get("spark.hadoop.fs.file.impl") == CLASS_NAME  # the server writes without forks
        assert server_status(tmp_path).running
    finally:
        close_sessions(tmp_path)
        stop_server(tmp_path)
    after = server_status(tmp_path)
    assert not after.running and after.pid is None
    assert _gone_within(status.pid, seconds=15)


def _gone_within(pid: int, seconds: float) -> bool:
    """The server process has exited: no such pid, or a zombie its parent has not reaped yet."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().rsplit(")", 1)[-1].split()[0] == "Z":
            return True
        time.sleep(0.2)
    return False


@pytest.mark.slow
@pytest.mark.usefixtures("spark")
def test_a_chosen_port_taken_before_the_server_binds_it_is_left_for_another(tmp_path, monkeypatch):
    """The race the free-port choice has: another program listens on the port after it was chosen and before the
    JVM binds it. The server must not take that listener for itself; it is launched again on another port."""
    import dagster_sparkmesh.engine.connect_server as connect_server

    real_launch = connect_server._launch
    intruders: list[socket.socket] = []

    def launch_then_lose_the_port(project_path, connection, port):
        status = real_launch(project_path, connection, port)
        if not intruders:  # the first launch only: another program binds the port now
            intruder = socket.socket()
            intruder.bind(("127.0.0.1", port))
            intruder.listen()
            intruders.append(intruder)
        return status

    monkeypatch.setattr(connect_server, "_launch", launch_then_lose_the_port)
    try:
        status = start_server(tmp_path, SparkConnection(mode="managed", master="local[1]"))
        taken = intruders[0].getsockname()[1]
        assert status.running and status.port != taken
        assert b"java.net.BindException" in status.log_path.read_bytes()  # how the first launch ended
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        client = ConnectSession.builder.remote(status.url).create()
        try:
            assert client.sql("SELECT 41 + 1 AS answer").collect()[0].answer == 42
        finally:
            client.stop()
    finally:
        stop_server(tmp_path)
        for intruder in intruders:
            intruder.close()


def test_a_listener_is_told_from_its_own_process_group(tmp_path):
    from dagster_sparkmesh.engine.processes import group_listens_on

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert group_listens_on(os.getpgid(0), port)
        assert not group_listens_on(1, port)  # init's group holds no such socket
    assert not group_listens_on(os.getpgid(0), port)  # closed: nobody listens
