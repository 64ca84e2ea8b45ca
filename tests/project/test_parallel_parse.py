"""A large project's SQL files parsed by forked workers: the same models and fingerprints as parsed in-process,
each file's error with its file and line, broken files set aside in order. Each load runs in a fresh process (a
test process holding other threads never forks)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

MODELS = 80  # above parallel_parse.MIN_FILES

LOAD = textwrap.dedent('''
    import json, os, sys
    from dagster_sparkmesh.project.loader import load_project
    from dagster_sparkmesh.errors import ProjectError
    try:
        project = load_project(sys.argv[1], use_cache=False, set_aside_broken=sys.argv[2] == "tolerant")
    except ProjectError as error:
        print(json.dumps({"error": str(error), "path": str(error.path), "line": error.line}))
        raise SystemExit(0)
    print(json.dumps({
        "parent": os.getpid(),
        "fingerprints": {name: model.fingerprint for name, model in project.models.items()},
        "pids": sorted({str(model.query).split("AS parsed_by")[0].split()[-1] for model in project.models.values()
                        if "AS parsed_by" in str(model.query)}),
        "broken": [(item.path.name, item.error.splitlines()[0]) for item in project.broken],
    }))
''')


def _project(root: Path, *, with_pid: bool = False, broken_file: int | None = None) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: 2024-01-01\n")
    if with_pid:
        (root / "macros").mkdir()
        (root / "macros" / "pid.py").write_text(
            "import os\nfrom sqlmesh import macro\n\n\n@macro()\ndef parser_pid(evaluator):\n    return str(os.getpid())\n")
    for number in range(MODELS):
        parent = f"FROM db.m{number - 1}" if number else ""
        extra = ", @parser_pid() AS parsed_by" if with_pid else ""
        body = f"SELECT {number} AS n, @EACH([1, 2], x -> x * {number} AS c_@x){extra} {parent}"
        if number == broken_file:
            body = "SELECT FROM WHERE"
        (root / "models" / f"m{number}.sql").write_text(f"MODEL (name db.m{number}, kind FULL);\n\n{body}\n")
    return root


def _load(project: Path, workers: int, mode: str = "strict") -> dict:
    environment = {"SPARKMESH_LOAD_WORKERS": str(workers), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", LOAD, str(project), mode], capture_output=True, text=True,
                            env=environment, timeout=300, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_workers_parse_the_same_models_as_one_process(tmp_path):
    project = _project(tmp_path / "p")
    alone, forked = _load(project, 1), _load(project, 2)
    assert len(alone["fingerprints"]) == MODELS and forked["fingerprints"] == alone["fingerprints"]


def test_the_files_are_parsed_in_worker_processes(tmp_path):
    project = _project(tmp_path / "p", with_pid=True)
    forked = _load(project, 2)
    assert len(forked["pids"]) == 2 and str(forked["parent"]) not in forked["pids"]
    alone = _load(project, 1)
    assert alone["pids"] == [str(alone["parent"])]


def test_a_workers_error_keeps_its_file_and_line_and_a_tolerant_load_sets_the_file_aside(tmp_path):
    project = _project(tmp_path / "p", broken_file=40)
    strict = _load(project, 2)
    assert strict["path"].endswith("m40.sql") and strict["line"] == 3, strict
    tolerant = _load(project, 2, "tolerant")
    assert [name for name, _ in tolerant["broken"]][:1] == ["m40.sql"]
    assert "db.m39" in tolerant["fingerprints"] and "db.m40" not in tolerant["fingerprints"]


def test_an_endless_loop_in_a_worker_stops_at_the_load_time_limit_and_leaves_no_worker(tmp_path):
    project = _project(tmp_path / "p")
    (project / "macros").mkdir()
    (project / "macros" / "spin.py").write_text(
        "from sqlmesh import macro\n\n\n@macro()\ndef spin(evaluator):\n    while True:\n        pass\n")
    (project / "models" / "m40.sql").write_text("MODEL (name db.m40, kind FULL);\n\nSELECT @spin() AS n\n")
    environment = {"SPARKMESH_LOAD_WORKERS": "2", "SPARKMESH_LOAD_TIMEOUT": "3", "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", LOAD, str(project), "strict"], capture_output=True, text=True,
                            env=environment, timeout=120, check=True)
    assert "loading the project took more than 3 s" in json.loads(result.stdout.strip().splitlines()[-1])["error"]
    leftovers = subprocess.run(["pgrep", "-f", str(project)], capture_output=True, text=True, check=False)
    assert leftovers.stdout.strip() == ""
