"""SQLMesh's side: ``sqlmesh_probe.py`` run by the referee's interpreter, its JSON read into the shared records."""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict
from pathlib import Path

from sqlmesh_compat.records import Interval, ModelFacts, SideResult, TestOutcome

PROBE = Path(__file__).with_name("sqlmesh_probe.py")
PROBE_TIMEOUT_SECONDS = 600


def sqlmesh_side(python: Path, folders: list[Path], interval: Interval, unit_tests: bool = True,
                 runtime_stage: str | None = None) -> SideResult:
    """``runtime_stage``: the stage SQLMesh renders at (its value, e.g. ``"evaluating"``); None: SQLMesh's default."""
    request = {"paths": [str(f) for f in folders], **asdict(interval), "unit_tests": unit_tests,
               "runtime_stage": runtime_stage}
    result = subprocess.run(
        [str(python), str(PROBE), json.dumps(request)],
        capture_output=True, text=True, check=False, timeout=PROBE_TIMEOUT_SECONDS, cwd=folders[0],
    )
    if result.returncode != 0:
        raise RuntimeError(f"the SQLMesh probe crashed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return _side_result(json.loads(result.stdout.strip().splitlines()[-1]))


def _side_result(document: dict) -> SideResult:
    models = {
        name: ModelFacts(
            kind=facts["kind"],
            dialect=facts["dialect"],
            depends_on=tuple(facts["depends_on"]),
            sql=facts["sql"],
            sql_dialect=facts["dialect"] or "duckdb",
            render_error=facts["render_error"],
            columns=facts["columns"],
            statements=tuple(facts["statements"]) if facts["statements"] is not None else None,
        )
        for name, facts in document["models"].items()
    }
    tests = {name: TestOutcome(**outcome) for name, outcome in document["unit_tests"].items()}
    return SideResult(
        loaded=document["loaded"], error=document["error"], models=models,
        externals=frozenset(document["externals"]), external_columns=document["externals"], unit_tests=tests,
    )
