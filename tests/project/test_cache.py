"""The parse cache can never block or mislead a load (architecture invariant 5)."""

from __future__ import annotations

import random
import shutil
import threading
from pathlib import Path

from dagster_sparkmesh.project.cache import PACK_NAME, cache_dir
from dagster_sparkmesh.project.loader import load_project


def write_project(root: Path, count: int = 12) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "models/m0.sql").write_text("MODEL (name m.m0, kind FULL);\nSELECT 1 AS id")
    for index in range(1, count):
        (root / f"models/m{index}.sql").write_text(
            f"MODEL (name m.m{index}, kind FULL);\nSELECT id + {index} AS id FROM m.m{(index - 1) // 2}"
        )
    return root


def pack(root: Path) -> Path:
    return cache_dir(root, "sql_models") / PACK_NAME


def entries(root: Path) -> list[bytes]:
    """The pack's lines, one per cached model file."""
    return pack(root).read_bytes().splitlines()


def test_cache_entries_are_written_and_reused(tmp_path):
    root = write_project(tmp_path)
    first = load_project(root)
    assert len(entries(root)) == 12
    assert [path.name for path in cache_dir(root, "sql_models").iterdir()] == [PACK_NAME]  # one file, not 12
    stamp = pack(root).stat().st_mtime_ns
    assert load_project(root).models == first.models
    assert pack(root).stat().st_mtime_ns == stamp  # a warm load writes nothing
    assert load_project(root, use_cache=False).models == first.models


def test_entries_of_an_older_cache_format_are_removed(tmp_path):
    root = write_project(tmp_path)
    folder = cache_dir(root, "sql_models")
    folder.mkdir(parents=True)
    (folder / ("0" * 64 + ".json")).write_text("{}")
    assert len(load_project(root).models) == 12
    assert [path.name for path in folder.iterdir()] == [PACK_NAME]


def test_deleted_model_file_and_stale_entries(tmp_path):
    root = write_project(tmp_path)
    load_project(root)
    (root / "models/m11.sql").unlink()
    project = load_project(root)
    assert "m.m11" not in project.models and len(project.models) == 11
    assert len(entries(root)) == 11  # the stale entry was pruned


def test_damaged_entries_are_misses(tmp_path):
    root = write_project(tmp_path)
    expected = load_project(root, use_cache=False).models
    load_project(root)
    rng = random.Random(7)
    for round_number in range(8):
        lines = entries(root)
        for index in rng.sample(range(len(lines)), 6):
            line = lines[index]
            action = rng.choice(["delete", "truncate", "corrupt", "empty", "wrong_record", "garbage"])
            if action == "delete":
                line = b""
            elif action == "truncate":
                line = line[: rng.randrange(1, 200)]
            elif action == "corrupt":
                # Still valid JSON, still a valid record: only the checksum can tell.
                line = line.replace(b"SELECT", b"SELECT 666 AS x,", 1)
            elif action == "empty":
                line = line[:130]
            elif action == "wrong_record":
                line = line[:130] + b'{"model": {"name": 1}}'
            else:
                line = bytes(rng.randrange(256) for _ in range(300))
            lines[index] = line
        # Lines lost to a partial write or joined by a lost newline: a miss for them, never for the others.
        pack(root).write_bytes(b"\n".join(lines)[: -rng.choice((1, 50))] if round_number % 2 else b"\n".join(lines))
        assert load_project(root).models == expected, round_number
    pack(root).write_bytes(b"")
    assert load_project(root).models == expected
    assert len(entries(root)) == 12  # and the pack is whole again


def test_a_valid_looking_entry_for_another_file_is_not_served(tmp_path):
    root = write_project(tmp_path, count=2)
    load_project(root)
    (root / "models/m1.sql").write_text("MODEL (name m.m1, kind FULL);\nSELECT id + 100 AS id FROM m.m0")
    assert "100" in load_project(root).models["m.m1"].query


def test_an_unwritable_cache_does_not_block(tmp_path):
    root = write_project(tmp_path)
    blocker = cache_dir(root, "sql_models")
    blocker.parent.mkdir(parents=True)
    blocker.write_text("not a folder")
    assert len(load_project(root).models) == 12


def test_entries_deleted_while_loading(tmp_path):
    """Another process (``sparkmesh clean``, a janitor) removes entries between listing and reading."""
    root = write_project(tmp_path, count=40)
    expected = load_project(root, use_cache=False).models
    stop = threading.Event()

    def vandal() -> None:
        rng = random.Random(3)
        while not stop.is_set():
            folder = cache_dir(root, "sql_models")
            if rng.random() < 0.1:
                shutil.rmtree(folder, ignore_errors=True)
            for path in list(folder.glob("*"))[:5]:
                try:
                    if rng.random() < 0.5:
                        path.unlink()
                    else:
                        path.write_bytes(path.read_bytes()[:10])
                except OSError:
                    pass

    thread = threading.Thread(target=vandal, daemon=True)
    thread.start()
    try:
        for _ in range(15):
            assert load_project(root).models == expected
    finally:
        stop.set()
        thread.join(timeout=5)


def test_every_module_that_shapes_a_parsed_sql_file_is_in_the_caches_key():
    # An edit of any of them (an upgrade that transpiles differently) must never serve models parsed by the old code.
    import pkgutil

    import dagster_sparkmesh.project.sql as sql_package
    from dagster_sparkmesh.project.parse_cache_key import PARSER_MODULES

    salted = {module.__name__ for module in PARSER_MODULES}
    parsing = {f"{sql_package.__name__}.{info.name}" for info in pkgutil.iter_modules(sql_package.__path__)}
    assert parsing - {f"{sql_package.__name__}.formatter"} <= salted, sorted(parsing - salted)
