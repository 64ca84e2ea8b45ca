"""The class-data archive: claimed by one managed server, written by its JVM's exit, mapped by later JVMs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dagster_sparkmesh.engine import class_archive, local_filesystem
from dagster_sparkmesh.engine.class_archive import ArchiveUse, archive_use, note_writer, settle
from dagster_sparkmesh.engine.connect_server import server_status, start_server, stop_server
from dagster_sparkmesh.engine.settings import require_java
from dagster_sparkmesh.project.config import SparkConnection

OPTIONS = "spark.driver.extraJavaOptions"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for variable in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS"):
        monkeypatch.delenv(variable, raising=False)
    return tmp_path / "cache" / "sparkmesh" / "java"


@pytest.fixture
def any_dump_usable(monkeypatch):
    """The claim and rename protocol alone, with stand-in files (a real archive is the slow test's)."""
    monkeypatch.setattr(class_archive, "_usable", lambda java, archive: True)


def test_the_first_launch_claims_the_archive_and_a_clean_exit_puts_it_in_place(cache, any_dump_usable):
    java = require_java()
    first = archive_use(java, {"spark.driver.extraClassPath": "/opt/a.jar", OPTIONS: "-Xss4m"})
    assert first.dump is not None and first.java_options == f"-XX:ArchiveClassesAtExit={first.dump}"
    assert archive_use(java, {"spark.driver.extraClassPath": "/opt/a.jar"}) == ArchiveUse()  # one writer at a time
    first.dump.write_bytes(b"archive")  # what the JVM writes at its exit
    settle(first.dump, exited_cleanly=True)
    final = cache / (first.dump.name.split(".")[0] + ".jsa")
    assert final.read_bytes() == b"archive" and sorted(p.name for p in cache.iterdir()) == [final.name]
    used = archive_use(java, {"spark.driver.extraClassPath": "/opt/a.jar"})
    assert used == ArchiveUse(java_options=f"-XX:SharedArchiveFile={final} -Xlog:cds*=off")
    other = archive_use(java, {"spark.driver.extraClassPath": "/opt/b.jar"})  # another class path, another archive
    assert other.dump is not None and not other.dump.name.startswith(final.stem)


def test_a_jar_of_the_class_path_changed_in_place_names_another_archive(cache, tmp_path, any_dump_usable):
    jar = tmp_path / "extra.jar"
    jar.write_bytes(b"one")
    settings = {"spark.driver.extraClassPath": str(jar)}
    first = archive_use(require_java(), settings)
    first.dump.write_bytes(b"archive")
    settle(first.dump, exited_cleanly=True)
    jar.write_bytes(b"two!")  # the JVM would ignore the archive now: its jar is not the one archived
    again = archive_use(require_java(), settings)
    assert again.dump is not None and not again.dump.name.startswith(first.dump.name.split(".")[0])


def test_a_local_jvm_maps_the_archive_but_never_writes_one(cache, any_dump_usable):
    java = require_java()
    settings = {OPTIONS: "-Xss4m"}
    assert class_archive.add_archive(settings, java, may_write=False) is None
    assert settings == {OPTIONS: "-Xss4m"} and not list(cache.glob("*.claim"))
    dump = class_archive.add_archive(dict(settings), java, may_write=True)
    dump.write_bytes(b"archive")
    settle(dump, exited_cleanly=True)
    assert class_archive.add_archive(settings, java, may_write=False) is None
    final = next(cache.glob("*.jsa"))
    assert settings[OPTIONS] == f"-Xss4m -XX:SharedArchiveFile={final} -Xlog:cds*=off"


def test_a_killed_writer_leaves_no_archive_and_its_claim_until_stale(cache):
    java = require_java()
    use = archive_use(java, {})
    use.dump.write_bytes(b"half an arch")
    settle(use.dump, exited_cleanly=False)
    assert not use.dump.exists() and not list(cache.glob("*.jsa"))
    assert archive_use(java, {}).dump is None  # no new attempt at every launch
    claim = next(cache.glob("*.claim"))
    left = cache / f"{claim.stem}.0123.dumping"  # a writer killed without a stop that settled it: no archive
    left.write_bytes(b"half")
    day_ago = time.time() - class_archive.CLAIM_STALE_SECONDS - 60
    os.utime(claim, (day_ago, day_ago))
    again = archive_use(java, {})
    assert again.dump is not None and not left.exists() and not list(cache.glob("*.jsa"))


def test_an_archive_left_by_a_writer_that_is_gone_is_kept_by_the_next_launch(cache, any_dump_usable):
    java = require_java()
    use = archive_use(java, {})
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    note_writer(use.dump, int(gone.stdout))  # a server that ended on its own, with nobody to stop it
    use.dump.write_bytes(b"whole archive")
    after = archive_use(java, {})
    final = cache / (use.dump.name.split(".")[0] + ".jsa")
    assert after == ArchiveUse(java_options=f"-XX:SharedArchiveFile={final} -Xlog:cds*=off")
    assert final.read_bytes() == b"whole archive" and not list(cache.glob("*.claim"))


def test_a_file_that_is_no_archive_is_not_put_in_place(cache):
    use = archive_use(require_java(), {})
    use.dump.write_bytes(b"\0" * 4096)  # a JVM would ignore it, and it would stand in the real archive's place
    settle(use.dump, exited_cleanly=True)
    assert not list(cache.glob("*.jsa")) and not use.dump.exists()


@pytest.mark.parametrize("option", [
    "-Xshare:off", "-XX:SharedArchiveFile=/my/own.jsa", "-XX:ArchiveClassesAtExit=x", "-XX:-UseCompressedClassPointers",
])
@pytest.mark.parametrize("where", ["spark.driver.extraJavaOptions", "spark.driver.defaultJavaOptions", "JAVA_TOOL_OPTIONS"])
def test_the_users_own_sharing_option_wins_wherever_it_is_set(cache, monkeypatch, option, where):
    settings = {OPTIONS: "-Xss4m"}
    if where.startswith("spark."):
        settings[where] = f"{settings.get(where, '')} {option}"
    else:
        monkeypatch.setenv(where, option)
    assert archive_use(require_java(), settings) == ArchiveUse()
    assert not cache.exists() or not list(cache.iterdir())


def test_no_claim_where_a_jvm_with_the_drivers_options_cannot_write_an_archive(cache):
    # (a Java runtime without the JDK's base archive refuses as this option does: the server would not start)
    assert archive_use(require_java(), {OPTIONS: "-XX:+NoSuchOptionAnywhere"}) == ArchiveUse()
    assert not list(cache.glob("*.claim"))


def test_an_unwritable_cache_launches_without_an_archive(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder should be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert archive_use(require_java(), {}) == ArchiveUse()


@pytest.mark.slow
@pytest.mark.usefixtures("spark")  # the local session before any Connect one: see tests/reliability/conftest.py
def test_a_stopped_servers_archive_is_mapped_by_the_next_server_and_local_sessions(tmp_path, cache):
    connection = SparkConnection(mode="managed", master="local[1]")  # each start chooses a free port
    project = tmp_path / "project"
    project.mkdir()
    # This process memoized the fork-free jar of the real cache: the servers' class path names the test's own, as
    # the local session's process of its own does.
    local_filesystem.compiled_classes.cache_clear()
    try:
        first = start_server(project, connection)
        assert first.class_archive_dump is not None and not list(cache.glob("*.jsa"))
        stop_server(project)  # the JVM writes the archive as it exits; the stop puts it in place
        archives = list(cache.glob("*.jsa"))
        assert len(archives) == 1 and archives[0].stat().st_size > 10_000_000 and not list(cache.glob("*.dumping"))
        _a_cut_short_copy_is_refused(archives[0])
        second = start_server(project, connection)
        assert second.class_archive_dump is None
        assert str(archives[0]) in Path(f"/proc/{second.pid}/maps").read_text()  # the JVM maps it
        assert server_status(project).running
    finally:
        stop_server(project)
        local_filesystem.compiled_classes.cache_clear()
    assert str(archives[0]) in _maps_of_a_local_session(tmp_path / "local")


def _a_cut_short_copy_is_refused(archive: Path) -> None:
    """A dump ended by a full disk aborts every JVM that maps it (Java 17): the check keeps it out."""
    moved = archive.with_suffix(".aside")
    archive.rename(moved)
    try:
        cut_short = archive.with_name(f"{archive.stem}.cut.dumping")
        cut_short.write_bytes(moved.read_bytes()[: moved.stat().st_size // 2])
        settle(cut_short, exited_cleanly=True)
        assert not archive.exists() and not cut_short.exists()
        assert not list(Path.cwd().glob("hs_err_pid*.log"))  # the aborted check's crash report stays out of the way
    finally:
        moved.rename(archive)


def _maps_of_a_local_session(project: Path) -> str:
    """The memory map of a local session's JVM, opened as sparkmesh opens it, in a process of its own."""
    project.mkdir()
    script = (
        "import sys; from pathlib import Path\n"
        "from dagster_sparkmesh.engine.session import open_session\n"
        "from dagster_sparkmesh.project.config import SparkConnection\n"
        "spark = open_session(SparkConnection(mode='local', master='local[1]'), Path(sys.argv[1]))\n"
        "print('MAPS', spark.sparkContext._gateway.proc.pid)\n"
        "print(open(f'/proc/{spark.sparkContext._gateway.proc.pid}/maps').read())\n"
    )
    run = subprocess.run([sys.executable, "-c", script, str(project)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout
