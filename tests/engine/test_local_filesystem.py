"""The fork-free local filesystem: compiled once into a user cache, used by local-master sessions, never blocking."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path


from dagster_sparkmesh.engine import local_filesystem
from dagster_sparkmesh.engine.local_filesystem import CLASS_NAME, fork_free_settings
from dagster_sparkmesh.engine.settings import require_java, session_settings, warehouse_dir
from dagster_sparkmesh.project.config import SparkConnection

compile_now = local_filesystem.compiled_classes.__wrapped__  # past the per-process memo


def test_the_shared_session_writes_through_the_fork_free_filesystem(spark, spark_project, engine, schema):
    jvm = spark.sparkContext._jvm
    filesystem = jvm.org.apache.hadoop.fs.FileSystem.get(
        jvm.java.net.URI("file:///"), spark.sparkContext._jsc.hadoopConfiguration()
    )
    assert filesystem.getClass().getName() == CLASS_NAME
    engine.catalog.execute(f"CREATE TABLE {schema}.days (id INT, ds DATE) USING parquet PARTITIONED BY (ds)")
    engine.catalog.execute(f"INSERT OVERWRITE TABLE {schema}.days VALUES (1, DATE'2024-01-01'), (2, DATE'2024-01-02')")
    assert engine.catalog.query_rows(f"SELECT id, CAST(ds AS STRING) FROM {schema}.days ORDER BY id") == [
        (1, "2024-01-01"), (2, "2024-01-02"),
    ]
    table_dir = Path(warehouse_dir(spark_project)) / f"{schema}.db" / "days"
    day_dir = table_dir / "ds=2024-01-01"
    data = [p for p in day_dir.iterdir() if p.name.startswith("part-")]
    assert data and (day_dir / f".{data[0].name}.crc").is_file()  # still Hadoop's checksummed local filesystem
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(day_dir.stat().st_mode) == 0o777 & ~umask  # the permissions Hadoop asks for, as with chmod
    assert stat.S_IMODE(data[0].stat().st_mode) == 0o666 & ~umask


def test_compiled_once_into_a_jar_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    java = require_java()
    jar = compile_now(java)
    assert jar is not None and jar.parent == tmp_path / "sparkmesh" / "java" and jar.suffix == ".jar"
    assert set(zipfile.ZipFile(jar).namelist()) == {
        "dev/sparkmesh/ForkFreeLocalFileSystem.class", "dev/sparkmesh/ForkFreeLocalFileSystem$Raw.class",
    }
    compiled_at = jar.stat().st_mtime_ns
    assert compile_now(java) == jar and jar.stat().st_mtime_ns == compiled_at  # found, not compiled again
    assert [p.name for p in jar.parent.iterdir()] == [jar.name]  # no private compile folder left


def test_a_jar_cut_short_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    java = require_java()
    jar = compile_now(java)
    jar.write_bytes(jar.read_bytes()[:100])  # a copy ended by a full disk
    assert compile_now(java) == jar
    assert "dev/sparkmesh/ForkFreeLocalFileSystem$Raw.class" in zipfile.ZipFile(jar).namelist()


def test_without_javac_sessions_keep_hadoops_filesystem(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no javac on PATH either
    runtime_only = tmp_path / "jre" / "bin"
    runtime_only.mkdir(parents=True)
    (runtime_only / "java").write_text("")
    assert compile_now(str(runtime_only / "java")) is None
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.class"))


def test_an_unwritable_cache_never_blocks(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder should be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert compile_now(require_java()) is None


def test_settings_keep_the_users_class_path_and_choice(tmp_path):
    java = require_java()
    settings = fork_free_settings(java, "/opt/extra.jar")
    assert settings["spark.hadoop.fs.file.impl"] == CLASS_NAME
    assert settings["spark.driver.extraClassPath"].startswith("/opt/extra.jar" + os.pathsep)
    own = session_settings(SparkConnection(mode="local", config={
        "spark.hadoop.fs.file.impl": "my.FileSystem", "spark.driver.extraJavaOptions": "-Xss4m",
    }), tmp_path)
    assert own["spark.hadoop.fs.file.impl"] == "my.FileSystem"
    # The user's JVM options add to ours: Derby keeps its home (derby.log) in the project's metastore folder.
    derby_home = f"-Dderby.system.home={tmp_path.resolve()}/.sparkmesh/metastore"
    assert own["spark.driver.extraJavaOptions"] == f"{derby_home} -XX:MetaspaceSize=256m -XX:+UseParallelGC -Xss4m"
    cluster = session_settings(SparkConnection(mode="managed", master="spark://127.0.0.1:7077"), tmp_path)
    assert "spark.hadoop.fs.file.impl" not in cluster and "spark.driver.extraClassPath" not in cluster
