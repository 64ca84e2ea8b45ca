"""The managed server's class-data archive: claimed by one launch, written by its JVM's exit, mapped by later ones."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dagster_sparkmesh.engine import class_archive
from dagster_sparkmesh.engine.class_archive import archive_use, settle
from dagster_sparkmesh.engine.connect_server import server_status, start_server, stop_server
from dagster_sparkmesh.engine.settings import require_java
from dagster_sparkmesh.project.config import SparkConnection


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "sparkmesh" / "java"


@pytest.fixture
def any_dump_usable(monkeypatch):
    """The claim and rename protocol alone, with stand-in files (a real archive is the slow test's)."""
    monkeypatch.setattr(class_archive, "_usable", lambda archive: True)


def test_the_first_launch_claims_the_archive_and_a_clean_exit_puts_it_in_place(cache, any_dump_usable):
    java = require_java()
    first = archive_use(java, "/opt/a.jar", "-Xss4m")
    assert first.dump is not None and first.java_options == f"-XX:ArchiveClassesAtExit={first.dump}"
    assert archive_use(java, "/opt/a.jar", None) == class_archive.ArchiveUse()  # claimed: one writer at a time
    first.dump.write_bytes(b"archive")  # what the JVM writes at its exit
    settle(first.dump, exited_cleanly=True)
    final = cache / (first.dump.name.split(".")[0] + ".jsa")
    assert final.read_bytes() == b"archive" and sorted(p.name for p in cache.iterdir()) == [final.name]
    assert archive_use(java, "/opt/a.jar", None).java_options == f"-XX:SharedArchiveFile={final} -Xlog:cds*=off"
    other = archive_use(java, "/opt/b.jar", None)  # another class path: another archive, claimed anew
    assert other.dump is not None and not other.dump.name.startswith(final.stem)


def test_a_local_jvm_maps_the_archive_but_never_writes_one(cache, any_dump_usable):
    java = require_java()
    settings = {"spark.driver.extraJavaOptions": "-Xss4m"}
    assert class_archive.add_archive(settings, java, may_write=False) is None
    assert settings == {"spark.driver.extraJavaOptions": "-Xss4m"} and not list(cache.glob("*.claim"))
    dump = class_archive.add_archive(dict(settings), java, may_write=True)
    dump.write_bytes(b"archive")
    settle(dump, exited_cleanly=True)
    assert class_archive.add_archive(settings, java, may_write=False) is None
    final = next(cache.glob("*.jsa"))
    assert settings["spark.driver.extraJavaOptions"] == f"-Xss4m -XX:SharedArchiveFile={final} -Xlog:cds*=off"


def test_a_killed_writer_leaves_no_archive_and_its_claim_until_stale(cache):
    java = require_java()
    use = archive_use(java, None, None)
    use.dump.write_bytes(b"half an arch")
    settle(use.dump, exited_cleanly=False)
    assert not use.dump.exists() and not list(cache.glob("*.jsa"))
    assert archive_use(java, None, None).dump is None  # no new attempt at every launch
    claim = next(cache.glob("*.claim"))
    left = cache / f"{claim.stem}.0123.dumping"  # a writer killed without a stop that settled it
    left.write_bytes(b"half")
    day_ago = time.time() - class_archive.CLAIM_STALE_SECONDS - 60
    os.utime(claim, (day_ago, day_ago))
    again = archive_use(java, None, None)
    assert again.dump is not None and not left.exists()


@pytest.mark.parametrize("option", ["-Xshare:off", "-XX:SharedArchiveFile=/my/own.jsa", "-XX:ArchiveClassesAtExit=x"])
def test_the_users_own_sharing_option_wins(cache, option):
    assert archive_use(require_java(), None, f"-Xss4m {option}") == class_archive.ArchiveUse()
    assert not cache.exists() or not list(cache.iterdir())


def test_an_unwritable_cache_launches_without_an_archive(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder should be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert archive_use(require_java(), None, None) == class_archive.ArchiveUse()


@pytest.mark.slow
@pytest.mark.usefixtures("spark")  # the local session before any Connect one: see tests/reliability/conftest.py
def test_a_stopped_servers_archive_is_mapped_by_the_next_server(tmp_path, cache):
    connection = SparkConnection(mode="managed", master="local[1]")  # each start chooses a free port
    project = tmp_path / "project"
    project.mkdir()
    try:
        first = start_server(project, connection)
        assert first.class_archive_dump is not None and not list(cache.glob("*.jsa"))
        stop_server(project)  # the JVM writes the archive as it exits; the stop puts it in place
        archives = list(cache.glob("*.jsa"))
        assert len(archives) == 1 and archives[0].stat().st_size > 10_000_000 and not list(cache.glob("*.dumping"))
        size = archives[0].stat().st_size
        cut_short = cache / f"{archives[0].stem}.cut.dumping"  # a dump ended by a full disk: a JVM mapping it aborts
        cut_short.write_bytes(archives[0].read_bytes()[: size // 2])
        settle(cut_short, exited_cleanly=True)
        assert archives[0].stat().st_size == size and not cut_short.exists()
        assert not list(Path.cwd().glob("hs_err_pid*.log"))  # the aborted check's crash report stays out of the way
        second = start_server(project, connection)
        assert second.class_archive_dump is None
        assert str(archives[0]) in Path(f"/proc/{second.pid}/maps").read_text()  # the JVM maps it
        assert server_status(project).running
    finally:
        stop_server(project)
