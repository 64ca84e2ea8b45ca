"""A local filesystem without process forks, for the JVMs sparkmesh starts with a local master.

Without Hadoop's native library (the pyspark wheel ships none), Hadoop's local filesystem runs a ``chmod`` process
for every file and folder it creates: about three per partition written, most of what a partitioned write costs
beyond a plain one (measured: a 90-day partitioned write took 3.1 s with the stock filesystem, 1.7 s with this one,
whose ``setPermission`` goes through java.nio). ``java/ForkFreeLocalFileSystem.java`` is compiled with the
machine's ``javac`` once per source and Hadoop version into a jar in a user cache folder (a jar, not a folder of
classes: a JVM whose class path holds a folder cannot write its class-data archive, ``engine.class_archive``).
Where it cannot be (a Java runtime without ``javac``, an unwritable cache), sessions use the stock filesystem:
slower, the same files. It never blocks
a session from starting, like every cache here (architecture invariant 5).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

import pyspark

log = logging.getLogger(__name__)

SOURCE = Path(__file__).parent / "java" / "ForkFreeLocalFileSystem.java"
CLASS_NAME = "dev.sparkmesh.ForkFreeLocalFileSystem"
_CLASS_FILES = ("ForkFreeLocalFileSystem.class", "ForkFreeLocalFileSystem$Raw.class")
_PACKAGE = "dev/sparkmesh"
COMPILE_TIMEOUT_SECONDS = 120


def fork_free_settings(java: str, classpath: str | None = None) -> dict[str, str]:
    """The Spark settings that make a local-master JVM use the fork-free filesystem, added to the driver's
    ``classpath`` (the user's ``spark.driver.extraClassPath``); empty when it is not available."""
    classes = compiled_classes(java)
    if classes is None:
        return {}
    return {
        "spark.hadoop.fs.file.impl": CLASS_NAME,
        "spark.driver.extraClassPath": os.pathsep.join(filter(None, [classpath, str(classes)])),
    }


@functools.cache
def compiled_classes(java: str) -> Path | None:
    """The jar of the compiled filesystem classes (compiling them the first time), or None."""
    hadoop_api = _hadoop_api_jar()
    javac = _javac_beside(java)
    if hadoop_api is None or javac is None:
        log.debug("the fork-free local filesystem is unavailable: no javac or no Hadoop jar")
        return None
    digest = hashlib.sha256(SOURCE.read_bytes() + hadoop_api.name.encode()).hexdigest()[:16]
    jar = cache_root() / f"fork-free-fs-{digest}.jar"
    if _complete(jar):
        return jar
    try:
        _compile_into(jar, javac, hadoop_api)
    except (OSError, subprocess.SubprocessError, zipfile.BadZipFile) as error:
        log.info("the fork-free local filesystem could not be compiled (%s): using Hadoop's", error)
    return jar if _complete(jar) else None


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sparkmesh" / "java"


def _compile_into(jar: Path, javac: str, hadoop_api: Path) -> None:
    """Compile and pack in a private folder, then link the jar into place: a reader never sees half the classes,
    and of two processes compiling at once the first one's jar stays (a class-data archive names its size and time)."""
    jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=jar.parent, prefix=".compiling-") as private:
        classes = Path(private) / "classes"
        command = [javac, "--release", "17", "-nowarn", "-cp", str(hadoop_api), "-d", str(classes), str(SOURCE)]
        subprocess.run(command, check=True, capture_output=True, timeout=COMPILE_TIMEOUT_SECONDS)
        packed = Path(private) / jar.name
        with zipfile.ZipFile(packed, "w") as archive:
            for name in _CLASS_FILES:
                archive.write(classes / _PACKAGE / name, f"{_PACKAGE}/{name}")
        try:
            os.link(packed, jar)  # never over a whole jar of another process: the JVMs check its size and time
        except FileExistsError:
            if not _complete(jar):
                packed.replace(jar)  # a jar cut short


def _complete(jar: Path) -> bool:
    try:
        with zipfile.ZipFile(jar) as archive:
            return {f"{_PACKAGE}/{name}" for name in _CLASS_FILES} <= set(archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _javac_beside(java: str) -> str | None:
    """The javac of the JDK that runs Spark, else any on PATH (``--release 17`` keeps the classes loadable)."""
    beside = Path(java).parent / "javac"
    return str(beside) if beside.is_file() else shutil.which("javac")


def _hadoop_api_jar() -> Path | None:
    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"))
    return jars[-1] if jars else None
