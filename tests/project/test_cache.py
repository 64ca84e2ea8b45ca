"""The parse cache can never block or mislead a load (DESIGN invariant 5)."""

from __future__ import annotations

import random
import shutil
import threading
from pathlib import Path

from dagster_sparkmesh.project.cache import cache_dir
from dagster_sparkmesh.project.loader import load_project


def write_project(root: Path, count: int = 12) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "models/m0.sql").write_text("MODEL (name m.m0, kind FULL);\nSELECT 1 AS id")
    for index in range(1, count):
        (root / f"models/m{index}.sql").write_text(
            f"MODEL (name m.m{index}, kind FULL);\nSELECT id + {index} AS id FROM m.m{(index - 1) // 2}"
        )
    return root


def entries(root: Path) -> list[Path]:
    return sorted(cache_dir(root, "sql_models").glob("*.json"))


def test_cache_entries_are_written_and_reused(tmp_path):
    root = write_project(tmp_path)
    first = load_project(root)
    assert len(entries(root)) == 12
    stamps = {path: path.stat().st_mtime_ns for path in entries(root)}
    assert load_project(root).models == first.models
    assert {path: path.stat().st_mtime_ns for path in entries(root)} == stamps
    assert load_project(root, use_cache=False).models == first.models


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
    for round_number in range(5):
        for path in rng.sample(entries(root), 6):
            action = rng.choice(["delete", "truncate", "corrupt", "empty", "wrong_record"])
            if action == "delete":
                path.unlink()
            elif action == "truncate":
                path.write_bytes(path.read_bytes()[: rng.randrange(1, 200)])
            elif action == "corrupt":
                # Still valid JSON, still a valid record: only the checksum can tell.
                path.write_bytes(path.read_bytes().replace(b"SELECT", b"SELECT 666 AS x,", 1))
            elif action == "empty":
                path.write_bytes(b"")
            else:
                path.write_text('{"model": {"name": 1}}')
        assert load_project(root).models == expected, round_number


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
            for path in list(folder.glob("*.json"))[:5]:
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
