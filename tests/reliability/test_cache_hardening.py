"""Caches can never block (architecture invariant 5): several processes load one project while its cache files are
deleted, truncated and overwritten with garbage at random; every load must succeed with the same models.

(Older state schemas migrated and newer ones refused: tests/state/test_migrations.py.)
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
LOADS_PER_PROCESS = 15
PROCESSES = 3

LOADER = """
import json, sys
from dagster_sparkmesh.project.loader import load_project
failures, names = [], set()
for _ in range(int(sys.argv[2])):
    try:
        names.add(tuple(sorted(load_project(sys.argv[1]).models)))
    except BaseException as error:
        failures.append(f"{type(error).__name__}: {error}")
print(json.dumps({"failures": failures, "model_sets": len(names), "models": len(next(iter(names), ()))}))
"""


def _damage(cache: Path, rng: random.Random) -> str:
    files = [p for p in cache.rglob("*") if p.is_file()]
    if not files:
        return "none"
    target = rng.choice(files)
    action = rng.choice(("delete", "truncate", "garbage", "half"))
    try:
        if action == "delete":
            target.unlink()
        elif action == "truncate":
            target.write_bytes(b"")
        elif action == "garbage":
            target.write_bytes(bytes(rng.randrange(256) for _ in range(64)))
        else:
            data = target.read_bytes()
            target.write_bytes(data[: len(data) // 2])
    except OSError:  # a loader replaced or removed it meanwhile
        return "raced"
    return action


def test_loads_survive_random_cache_damage_from_another_process(tmp_path):
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from generate_project import generate_project
    finally:
        sys.path.pop(0)
    project = tmp_path / "project"
    generate_project(project, models=30, days=3)
    children = [
        subprocess.Popen([sys.executable, "-c", LOADER, str(project), str(LOADS_PER_PROCESS)], stdout=subprocess.PIPE, text=True)
        for _ in range(PROCESSES)
    ]
    rng, actions = random.Random(5), []
    while any(child.poll() is None for child in children):
        actions.append(_damage(project / ".sparkmesh" / "cache", rng))
        time.sleep(0.005)
    reports = [json.loads(child.communicate()[0]) for child in children]
    damaged = sum(1 for action in actions if action not in ("none", "raced"))
    print("CACHE " + json.dumps({"loads": PROCESSES * LOADS_PER_PROCESS, "damaged_files": damaged,
                                 "failed_loads": sum(len(r["failures"]) for r in reports)}))
    assert damaged > 20, actions
    assert all(child.returncode == 0 for child in children)
    for report in reports:
        assert report["failures"] == [] and report["model_sets"] == 1 and report["models"] == 30, report
