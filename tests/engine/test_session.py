import subprocess
import sys
from pathlib import Path

import pytest

from dagster_sparkmesh.engine.connect_server import server_dir, server_status
from dagster_sparkmesh.engine.session import open_session
from dagster_sparkmesh.engine.settings import require_java
from dagster_sparkmesh.errors import ConfigError, EngineError
from dagster_sparkmesh.project.config import SparkConnection


def test_same_settings_reuse_the_open_session(spark, spark_project, spark_connection):
    assert open_session(spark_connection, spark_project) is spark
    assert spark.conf.get("spark.sql.sources.partitionOverwriteMode") == "dynamic"
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.conf.get("spark.sql.warehouse.dir").endswith(f"{spark_project.name}/.sparkmesh/warehouse")


def test_a_local_session_for_another_project_is_refused_not_silently_shared(spark, tmp_path):
    with pytest.raises(EngineError, match="another warehouse"):
        open_session(SparkConnection(mode="local", master="local[1]"), tmp_path)


def test_missing_java_says_how_to_install_java_17(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(EngineError, match="Java") as raised:
        require_java()
    assert "Java 17" in raised.value.hint


def test_unreachable_connect_server_fails_fast(tmp_path):
    with pytest.raises(EngineError, match="unreachable"):
        open_session(SparkConnection(mode="connect", remote="sc://127.0.0.1:1"), tmp_path)


def test_connect_mode_needs_a_remote_url(tmp_path):
    with pytest.raises(ConfigError, match="remote URL"):
        open_session(SparkConnection(mode="connect"), tmp_path)


def test_stale_server_record_is_cleaned(tmp_path: Path):
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(finished.stdout)
    server_dir(tmp_path).mkdir(parents=True)
    record = server_dir(tmp_path) / "server.json"
    record.write_text(f'{{"running": true, "pid": {dead_pid}, "port": 15002, "url": "sc://127.0.0.1:15002"}}')
    assert server_status(tmp_path).running is False
    assert not record.exists()


def test_hive_keeps_its_session_folders_in_the_project_not_in_the_system_temp(spark, spark_project):
    """Hive's per-session resource folder: a JVM that exits without closing its Hive session left one in /tmp per
    command; now it is under the project's state folder, where starting a session forgets the old ones."""
    spark.sql("SHOW DATABASES").collect()  # the metastore client is up
    folders = list((spark_project / ".sparkmesh" / "hive").glob("*_resources"))
    assert folders, "Hive made its session folder elsewhere"


def test_starting_a_session_forgets_hive_folders_older_than_a_day(tmp_path):
    import os
    import time

    from dagster_sparkmesh.engine.settings import forget_hive_sessions, hive_scratch_dir

    old, young = hive_scratch_dir(tmp_path) / "old_resources", hive_scratch_dir(tmp_path) / "young_resources"
    for folder in (old, young):
        folder.mkdir(parents=True)
    day_ago = time.time() - 86400 - 60
    os.utime(old, (day_ago, day_ago))
    forget_hive_sessions(tmp_path)
    assert not old.exists() and young.is_dir()
