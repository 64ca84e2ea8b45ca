"""A class-data archive for the managed server's JVM: Spark's classes loaded from one mapped file, not parsed again.

A fresh JVM that runs Spark loads and verifies some 20,000 classes: a good part of what a cold ``sparkmesh run`` on
a managed server costs beyond the work itself (the server starts for a daily run, and idles out after it). Java's
dynamic class-data sharing keeps them in an archive: one JVM writes it when it exits (``-XX:ArchiveClassesAtExit``)
and later ones map it (``-XX:SharedArchiveFile``): measured on the 30 x 90 project's daily run (a server started
and stopped for it, 2 cores), 26.2 s without it and 23.5 s with it.

One archive per Java, Spark and class path, in the user cache beside the fork-free filesystem. The first launch
that finds none *claims* it (a file created exclusively: one writer at a time, also across projects and
processes) and writes it at exit under a private name; the stop that waited for that exit checks that a JVM starts
with it and renames it into place.
A server killed before it finished writing leaves no archive, and its claim goes stale after a day. The JVM checks
an archive against its own version and class path and runs without it when they differ, so a mismatched or missing
archive costs time, never a session (a truncated one would abort the JVM: the check before the rename keeps it out) (architecture invariant 5). A user's own ``-Xshare`` or archive option wins.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pyspark

from dagster_sparkmesh.engine.local_filesystem import cache_root
from dagster_sparkmesh.engine.settings import require_java
from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.records import Record

log = logging.getLogger(__name__)

CLAIM_STALE_SECONDS = 24 * 3600.0
CHECK_TIMEOUT_SECONDS = 60
_USERS_OWN = ("-Xshare", "SharedArchiveFile", "ArchiveClassesAtExit")


class ArchiveUse(Record):
    """What a launch adds to its JVM options, and the file its exit writes (None: it writes none)."""

    java_options: str = ""
    dump: Path | None = None


_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
_CLASS_PATH = "spark.driver.extraClassPath"


def add_archive(settings: dict[str, str], java: str, *, may_write: bool) -> Path | None:
    """Add the archive's options to a JVM's Spark ``settings`` (after the user's); the file its exit writes, if any."""
    use = archive_use(java, settings.get(_CLASS_PATH), settings.get(_JAVA_OPTIONS), may_write=may_write)
    if use.java_options:
        settings[_JAVA_OPTIONS] = " ".join(filter(None, [settings.get(_JAVA_OPTIONS), use.java_options]))
    return use.dump


def archive_use(java: str, class_path: str | None, java_options: str | None, *, may_write: bool = True) -> ArchiveUse:
    """Use the archive of this Java and class path, or (``may_write``: a JVM whose exit a stop waits for, the
    managed server's) claim writing it; nothing when the user chose already."""
    if any(option in (java_options or "") for option in _USERS_OWN):
        return ArchiveUse()
    final = _archive_path(java, class_path)
    if final is None:
        return ArchiveUse()
    if final.is_file():
        # Quiet: a JVM that finds the archive is not its own says so on standard output, the user's terminal.
        return ArchiveUse(java_options=f"-XX:SharedArchiveFile={final} -Xlog:cds*=off")
    if not may_write or not _claim(final.with_suffix(".claim")):
        return ArchiveUse()  # another JVM is writing it
    dump = final.with_name(f"{final.stem}.{uuid.uuid4().hex}.dumping")
    return ArchiveUse(java_options=f"-XX:ArchiveClassesAtExit={dump}", dump=dump)


def settle(dump: Path | None, *, exited_cleanly: bool) -> None:
    """After the JVM that wrote ``dump`` is gone: put a whole archive in place, or drop a partial one. A JVM that
    had to be killed keeps its claim (until stale): a machine too slow to write the archive within the stop's
    patience does not pay for another attempt at every stop."""
    if dump is None:
        return
    final = dump.with_name(dump.name.split(".")[0] + ".jsa")
    try:
        if exited_cleanly and dump.is_file() and _usable(dump):
            dump.replace(final)
            final.with_suffix(".claim").unlink(missing_ok=True)
        else:
            dump.unlink(missing_ok=True)
    except OSError as error:
        log.info("the class-data archive %s was not kept: %s", final, error)


def _usable(archive: Path) -> bool:
    """Whether a JVM starts with the archive: one cut short (a full disk) aborts every JVM that maps it, where a
    mismatched one is only ignored."""
    try:
        with tempfile.TemporaryDirectory() as scratch:  # where an aborted JVM leaves its crash report
            check = subprocess.run(
                [require_java(), f"-XX:SharedArchiveFile={archive}", "-Xlog:cds*=off", "-version"],
                cwd=scratch, capture_output=True, timeout=CHECK_TIMEOUT_SECONDS,
            )
    except (EngineError, OSError, subprocess.SubprocessError):
        return False
    return check.returncode == 0


def _archive_path(java: str, class_path: str | None) -> Path | None:
    """The archive's path, named by what the JVM checks it against; None when the cache cannot hold it."""
    try:
        real_java = Path(java).resolve()
        jars = Path(pyspark.__file__).parent / "jars"
        identity = [str(real_java), str(real_java.stat().st_mtime_ns), pyspark.__version__, str(jars),
                    *sorted(os.listdir(jars)), class_path or ""]
        folder = cache_root()
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        log.info("no class-data archive: %s", error)
        return None
    digest = hashlib.sha256("\0".join(identity).encode()).hexdigest()[:16]
    return folder / f"spark-classes-{digest}.jsa"


def _claim(claim: Path) -> bool:
    for _ in range(2):
        try:
            os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return True
        except FileExistsError:
            if not _stale(claim):
                return False
            claim.unlink(missing_ok=True)
            for left in claim.parent.glob(f"{claim.stem}.*.dumping"):  # by a server killed while writing
                left.unlink(missing_ok=True)
        except OSError:
            return False
    return False


def _stale(claim: Path) -> bool:
    try:
        return time.time() - claim.stat().st_mtime > CLAIM_STALE_SECONDS
    except OSError:
        return True
