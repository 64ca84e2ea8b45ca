"""The Spark settings every sparkmesh session shares, in-process or on the managed Connect server.

The catalog (Hive metastore on embedded Derby) and the warehouse live under ``<project>/.sparkmesh/`` so a project
carries its own tables; both session kinds build them here so they agree on where the data is.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.project.config import SparkConnection, state_dir

DEFAULT_SHUFFLE_PARTITIONS = "4"
_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
# Spark loads ~100 MB of class metadata while it starts; from the JVM's default threshold (~21 MB) on, every step of
# it stopped the JVM for a full collection (five in a server's start, 0.3 s). Server start: -0.2 to -0.7 s.
_METASPACE = "-XX:MetaspaceSize=256m"

# Runtime SQL settings: valid for every session, also on a Spark Connect server we did not start.
RUNTIME_SETTINGS = {
    # Static mode would wipe the whole table on INSERT OVERWRITE; dynamic replaces only the partitions written.
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.session.timeZone": "UTC",
}


def warehouse_dir(project_path: Path) -> Path:
    return (state_dir(project_path) / "warehouse").resolve()


def metastore_dir(project_path: Path) -> Path:
    return (state_dir(project_path) / "metastore").resolve()


def hive_scratch_dir(project_path: Path) -> Path:
    """Where the Hive client's per-session folders go: inside the project's state folder, emptied of old ones when
    a session starts (``forget_hive_sessions``)."""
    return (state_dir(project_path) / "hive").resolve()


def forget_hive_sessions(project_path: Path, older_than_seconds: float = 86400.0) -> None:
    """Remove the per-session folders of Hive sessions that ended without removing them (their JVM exited); a
    folder younger than a day may belong to a session still running."""
    folder = hive_scratch_dir(project_path)
    cutoff = time.time() - older_than_seconds
    for entry in folder.glob("*_resources") if folder.is_dir() else ():
        try:
            if entry.stat().st_mtime < cutoff:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:  # another process removed it meanwhile
            continue


def catalog_settings(project_path: Path) -> dict[str, str]:
    """Hive catalog on embedded Derby plus the warehouse, all inside the project's state folder."""
    metastore = metastore_dir(project_path)
    return {
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(warehouse_dir(project_path)),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={metastore}/metastore_db;create=true",
        # derby.log and Derby's own files go next to the metastore, not into the working directory.
        _JAVA_OPTIONS: f"-Dderby.system.home={metastore}",
        # The metastore copies the warehouse folder's owner, group and permissions onto every table and partition
        # folder it creates; without Hadoop's native library each costs a forked `ls -ld` (three per CREATE TABLE,
        # ~15 ms; measured 62 vs 47 ms per CREATE TABLE). The folders live in the project's own state folder.
        "spark.hadoop.hive.warehouse.subdir.inherit.perms": "false",
        # Hive makes a folder per session for ADD JAR/FILE resources, by default in the system's temporary folder,
        # and a JVM that exits without closing its Hive session leaves it there: one per command, forever.
        "spark.hadoop.hive.downloaded.resources.dir": f"{hive_scratch_dir(project_path)}/${{hive.session.id}}_resources",
    }


def session_settings(connection: SparkConnection, project_path: Path) -> dict[str, str]:
    """Everything a sparkmesh-owned JVM (local session or managed server) is started with."""
    settings = {
        **catalog_settings(project_path),
        **RUNTIME_SETTINGS,
        "spark.ui.enabled": "false",
        # Progress bars garble CLI output and Dagster's captured logs.
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": DEFAULT_SHUFFLE_PARTITIONS,
    }
    derby_home = settings[_JAVA_OPTIONS]
    settings.update(connection.config)
    # Ours first, then the user's: where both set one option, the user's wins.
    java_options = [derby_home, _METASPACE, throughput_collector(connection.config), connection.config.get(_JAVA_OPTIONS)]
    settings[_JAVA_OPTIONS] = " ".join(filter(None, java_options))
    if connection.master.startswith("local") and "spark.hadoop.fs.file.impl" not in connection.config:
        settings.update(_fork_free_filesystem(settings.get("spark.driver.extraClassPath")))
    return settings


def throughput_collector(config: dict[str, str]) -> str | None:
    """``-XX:+UseParallelGC`` for a driver heap of at most 4 GiB, unless the user chose a collector.

    A sparkmesh JVM spends its time on many small statements (analysis, metastore, code generation), which allocate
    much and keep little. There, G1's write barriers and concurrent threads cost CPU the queries need: on two cores
    the throughput collector made a CLI dev change through the managed server ~10 % faster (7.5-8.1 s against
    8.5-9.1 s once warm, alternating rounds) and a 30 x 90 backfill 5 % faster. Its pauses grow with the heap, so
    larger driver heaps keep the JVM's choice. Two collectors named at once would stop the JVM from starting."""
    named = named_java_options(config)
    if re.search(r"-XX:[+-]Use\w*GC\b", named):
        return None
    heap = _bytes(config.get("spark.driver.memory", "1g"))
    return "-XX:+UseParallelGC" if heap is not None and heap <= _SMALL_HEAP_BYTES else None


def named_java_options(config: dict[str, str]) -> str:
    """Every JVM option the driver gets from the user: Spark's two settings and the JVM's environment variables."""
    places = [config.get(_JAVA_OPTIONS), config.get("spark.driver.defaultJavaOptions"),
              os.environ.get("JAVA_TOOL_OPTIONS"), os.environ.get("JDK_JAVA_OPTIONS")]
    return " ".join(filter(None, places))


_SMALL_HEAP_BYTES = 4 * 1024**3
# Spark's size units; a number without one is MiB, as spark.driver.memory reads it.
_UNITS = {"": 1024**2, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def _bytes(size: str) -> int | None:
    """Bytes of a size in Spark's notation (``512m``, ``4g``, ``2048``); None when it is not one."""
    match = re.fullmatch(r"\s*(\d+)\s*([bkmgt]?)b?\s*", size.lower())
    return None if match is None else int(match.group(1)) * _UNITS[match.group(2)]


def _fork_free_filesystem(classpath: str | None) -> dict[str, str]:
    """Executors run inside the driver with a local master, so the driver's class path is enough for them; a
    cluster's executors would not find the class, and keep Hadoop's filesystem."""
    from dagster_sparkmesh.engine.local_filesystem import fork_free_settings

    try:
        java = require_java()
    except EngineError:
        return {}  # the session's own start reports the missing Java
    return fork_free_settings(java, classpath)


def require_java() -> str:
    """The java executable Spark will use; a clear error instead of py4j's 'Java gateway exited'."""
    java_home = os.environ.get("JAVA_HOME")
    candidate = Path(java_home) / "bin" / "java" if java_home else None
    if candidate is not None and candidate.exists():
        return str(candidate)
    found = shutil.which("java")
    if found:
        return found
    raise EngineError(
        "Java was not found: Spark needs a Java runtime (17 or 21)",
        hint="install a Java 17 JDK (Debian/Ubuntu: `apt-get install openjdk-17-jdk-headless`, macOS: "
        "`brew install openjdk@17`) and put it on PATH or set JAVA_HOME",
    )
