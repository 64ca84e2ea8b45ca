"""A class-data archive for the JVMs sparkmesh starts: Spark's classes mapped from one file, not parsed again.

A fresh JVM that runs Spark loads and verifies some 20,000 classes: a good part of what a cold ``sparkmesh run`` on
a managed server costs beyond the work itself (the server starts for a daily run, and idles out after it). Java's
dynamic class-data sharing keeps them in an archive: one JVM writes it when it exits (``-XX:ArchiveClassesAtExit``)
and later ones map it (``-XX:SharedArchiveFile``): measured on the 30 x 90 project's daily run (a server started
and stopped for it, 2 cores), 25.9 s without it and 23.1 s with it (``bench/README.md``).

One archive per Java, Spark jars and class path (each jar's size and time included, as the JVM checks them), in
the user cache beside the fork-free filesystem. The first managed server that finds none *claims* it (a file
created exclusively, naming the Java and then the server's pid: one writer at a time across processes) and writes
it at exit under a private name; the stop that saw that exit checks that a JVM starts with the file, then renames it
into place. A claim whose server is gone is settled by the next launch. Before claiming, a trial JVM with the
user's options must be able to write one (some options forbid it, and the server would not start). The JVM checks
an archive against itself and runs without it when they differ, so a mismatched or missing archive costs time,
never a session (architecture invariant 5); a truncated one would abort the JVM, which the check before the rename
keeps out. A user's own ``-Xshare`` or archive option, anywhere the driver's JVM options come from, turns ours off.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pyspark

from dagster_sparkmesh.engine.local_filesystem import cache_root
from dagster_sparkmesh.engine.processes import is_running
from dagster_sparkmesh.engine.settings import named_java_options
from dagster_sparkmesh.records import Record

log = logging.getLogger(__name__)

CLAIM_STALE_SECONDS = 24 * 3600.0
CHECK_TIMEOUT_SECONDS = 60
_DYNAMIC_ARCHIVE_MAGIC = 0xF00BABA8  # the first four bytes of a dynamic archive (HotSpot's header, native order)
_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
_CLASS_PATH = "spark.driver.extraClassPath"
# Options that choose sharing themselves, or with which a JVM refuses to write an archive.
_USERS_OWN = ("-Xshare", "SharedArchiveFile", "ArchiveClassesAtExit", "UseCompressedClassPointers",
              "--limit-modules", "--patch-module", "--upgrade-module-path")


class ArchiveUse(Record):
    """What a launch adds to its JVM options, and the file its exit writes (None: it writes none)."""

    java_options: str = ""
    dump: Path | None = None


def add_archive(settings: dict[str, str], java: str, *, may_write: bool) -> Path | None:
    """Add the archive's options to a JVM's Spark ``settings`` (after the user's); the file its exit writes, if any.
    ``may_write``: a JVM whose exit a stop waits for (the managed server's), not a local session's."""
    use = archive_use(java, settings, may_write=may_write)
    if use.java_options:
        settings[_JAVA_OPTIONS] = " ".join(filter(None, [settings.get(_JAVA_OPTIONS), use.java_options]))
    return use.dump


def archive_use(java: str, settings: dict[str, str], *, may_write: bool = True) -> ArchiveUse:
    """Use the archive of this Java and class path, or claim writing it; nothing when the user chose already."""
    if any(option in named_java_options(settings) for option in _USERS_OWN):
        return ArchiveUse()
    final = _archive_path(java, settings.get(_CLASS_PATH))
    if final is None:
        return ArchiveUse()
    claim = final.with_suffix(".claim")
    if not final.is_file() and claim.exists() and _stale(claim):
        _settle_left(claim)  # the last writer is gone: what it wrote may be whole
    if final.is_file():
        # Quiet: a JVM that finds the archive is not its own says so on standard output, the user's terminal.
        return ArchiveUse(java_options=_quoted(f"-XX:SharedArchiveFile={final}") + " -Xlog:cds*=off")
    if not may_write or not _can_write(java, settings) or not _claim(claim, java):
        return ArchiveUse()
    dump = final.with_name(f"{final.stem}.{uuid.uuid4().hex}.dumping")
    return ArchiveUse(java_options=_quoted(f"-XX:ArchiveClassesAtExit={dump}"), dump=dump)


def note_writer(dump: Path | None, pid: int | None) -> None:
    """Name the server that writes ``dump`` in its claim: once that process is gone, the claim is stale."""
    if dump is None or pid is None:
        return
    claim = _claim_of(dump)
    record = _claim_record(claim)
    try:
        if record is not None:
            claim.write_text(json.dumps({**record, "writer": pid}))
    except OSError:
        return  # a claim that cannot be read or written goes stale by its age instead


def settle(dump: Path | None, *, exited_cleanly: bool) -> None:
    """After the JVM that wrote ``dump`` is gone: put a whole archive in place, or drop a partial one. A JVM that
    had to be killed keeps its claim until stale: a machine too slow to write the archive within the stop's
    patience does not pay for another attempt at every stop."""
    if dump is None:
        return
    claim, final = _claim_of(dump), _final_of(dump)
    try:
        if exited_cleanly and dump.is_file() and not final.exists() and _usable(_claim_java(claim), dump):
            dump.replace(final)
            claim.unlink(missing_ok=True)
        else:
            dump.unlink(missing_ok=True)
            if exited_cleanly:
                claim.unlink(missing_ok=True)
    except OSError as error:
        log.info("the class-data archive %s was not kept: %s", final, error)


def _settle_left(claim: Path) -> None:
    """A stale claim: keep a whole archive its writer left (it exited on its own, nobody stopped it), drop the rest."""
    for left in claim.parent.glob(f"{claim.stem}.*.dumping"):
        settle(left, exited_cleanly=True)
    claim.unlink(missing_ok=True)


def _usable(java: str | None, archive: Path) -> bool:
    """Whether the file is a dynamic archive a JVM starts with: one cut short (a full disk) aborts every JVM that
    maps it; one that is no archive at all would only be ignored, but would stand in the real one's place."""
    try:
        with open(archive, "rb") as handle:
            magic = int.from_bytes(handle.read(4), sys.byteorder)
    except OSError:
        return False
    return magic == _DYNAMIC_ARCHIVE_MAGIC and java is not None and _trial(
        java, [f"-XX:SharedArchiveFile={archive}", "-Xlog:cds*=off"]
    )


def _can_write(java: str, settings: dict[str, str]) -> bool:
    """Whether a JVM with the driver's options can write an archive (not one without the JDK's base archive)."""
    with tempfile.TemporaryDirectory() as scratch:
        return _trial(java, [*named_java_options(settings).split(), f"-XX:ArchiveClassesAtExit={scratch}/trial.jsa"])


def _trial(java: str, options: list[str]) -> bool:
    try:
        with tempfile.TemporaryDirectory() as scratch:  # where an aborted JVM leaves its crash report
            run = subprocess.run([java, *options, "-version"], cwd=scratch, capture_output=True,
                                 timeout=CHECK_TIMEOUT_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return False
    return run.returncode == 0


def _archive_path(java: str, class_path: str | None) -> Path | None:
    """The archive's path, named by what the JVM checks it against; None when the cache cannot hold it."""
    try:
        real_java = Path(java).resolve()
        jars = Path(pyspark.__file__).parent / "jars"
        entries = [real_java, *sorted(jars.iterdir()), *(Path(p) for p in (class_path or "").split(os.pathsep) if p)]
        identity = [pyspark.__version__, class_path or "", *(_stamp(entry) for entry in entries)]
        folder = cache_root()
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        log.info("no class-data archive: %s", error)
        return None
    digest = hashlib.sha256("\0".join(identity).encode()).hexdigest()[:16]
    return folder / f"spark-classes-{digest}.jsa"


def _stamp(path: Path) -> str:
    try:
        stat = path.stat()
    except OSError:
        return f"{path}:absent"
    return f"{path}:{stat.st_size}:{stat.st_mtime_ns}"


def _claim(claim: Path, java: str) -> bool:
    try:
        descriptor = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except OSError:
        return False
    with os.fdopen(descriptor, "w") as handle:
        handle.write(json.dumps({"java": java}))
    return True


def _stale(claim: Path) -> bool:
    """A claim whose writer is gone, or a day old (a writer never named: its launch failed)."""
    record = _claim_record(claim)
    try:
        age = time.time() - claim.stat().st_mtime
    except OSError:
        return True
    if record is None:  # cut short as it was written
        return True
    writer = record.get("writer")
    if isinstance(writer, int) and not is_running(writer):
        return True
    return age > CLAIM_STALE_SECONDS


def _claim_java(claim: Path) -> str | None:
    java = (_claim_record(claim) or {}).get("java")
    return java if isinstance(java, str) else None


def _claim_record(claim: Path) -> dict | None:
    """What a claim names (its Java, then its writer's pid); None when it cannot be read."""
    try:
        record = json.loads(claim.read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _claim_of(dump: Path) -> Path:
    return dump.with_name(dump.name.split(".")[0] + ".claim")


def _final_of(dump: Path) -> Path:
    return dump.with_name(dump.name.split(".")[0] + ".jsa")


def _quoted(option: str) -> str:
    """Spark's launcher splits the driver's options as a shell does: a cache path with a space stays one option."""
    return f'"{option}"' if " " in option else option
