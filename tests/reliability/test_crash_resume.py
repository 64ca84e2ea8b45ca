"""Crash and resume: ``sparkmesh plan prod --auto-apply`` is SIGKILLed at every stage of an apply, then re-run.

Each chain runs the CLI in child processes (clients of the suite's shared Spark Connect server) on its own project
and schema prefix. A chain kills an apply at one stage, resumes it with a new apply that is itself killed at a
later stage, and so on, then finishes with a clean run: every resume starts from what a kill left behind. Right
after every kill, each view that exists must already show complete data (the uninterrupted run's row count and
checksum, or the previous plan's); after the last run every view must equal the uninterrupted run's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dagster_sparkmesh.execution.crashpoints import STAGES
from reliability_harness import (  # registered by conftest.py
    CRASH_VIEWS, format_problems, run_cli, view_checksums, write_crash_project,
)

pytestmark = pytest.mark.every_layout  # `./dev test` runs it again on Iceberg and Delta tables

END = "2024-01-02"
APPLY = ("plan", "prod", "--auto-apply", "--no-prompts", "--end", END)
V1_TOTAL, V2_TOTAL = "SUM(amount) AS total", "SUM(amount) + 1 AS total"


@dataclass(frozen=True)
class Crash:
    at: str
    """``stage:n``: die the n-th time this run reaches the stage."""
    delay: float = 0.0
    """Die this long after reaching it: during the write or swap that follows."""

    @property
    def env(self) -> dict[str, str]:
        return {"SPARKMESH_CRASH_AT": self.at, "SPARKMESH_CRASH_DELAY": str(self.delay)}


@dataclass(frozen=True)
class Chain:
    name: str
    crashes: tuple[Crash, ...]
    update: bool = False
    """Crash while applying a change on top of an uninterrupted first deploy (else: during the first deploy)."""


CHAINS = (
    Chain("first", (
        Crash("push_snapshots:1"),
        Crash("interval_write:2"),  # between batch writes: events and day 1 done and recorded
        Crash("interval_write:1", delay=0.2),  # during the write of day 2 (a fresh day writes in well under 1 s)
        Crash("before_record_interval:1"),  # day 2 written, not recorded
        Crash("view_swap:2"),  # one view created
        Crash("view_swap:1", delay=0.02),  # during a view creation (a swap is one round trip now)
        Crash("environment_swap:1"),  # every view created, environment not recorded
        Crash("after_environment_swap:1"),  # nothing left to do: the resumed run must not die here
    )),
)


@dataclass
class Step:
    crash: Crash | None
    code: int
    views: dict
    output: str = field(repr=False, default="")


def _set_daily_total(project: Path, total: str) -> None:
    model = project / "models" / "daily.sql"
    model.write_text(model.read_text().replace(V1_TOTAL, total).replace(V2_TOTAL, total))


def _apply(project: Path, prefix: str, engine, crash: Crash | None = None) -> Step:
    result = run_cli(project, *APPLY, env=crash.env if crash else None)
    return Step(crash, result.returncode, view_checksums(engine, prefix), result.stdout + result.stderr)


def _run_chain(chain: Chain, root: Path, url: str, engine) -> list[Step]:
    project = write_crash_project(root / chain.name, chain.name, url)
    if chain.update:
        first = _apply(project, chain.name, engine)
        assert first.code == 0, first.output
        _set_daily_total(project, V2_TOTAL)
    steps = [_apply(project, chain.name, engine, crash) for crash in chain.crashes]
    return steps + [_apply(project, chain.name, engine)]


def _reference(root: Path, url: str, engine) -> tuple[dict, dict]:
    """Checksums of an uninterrupted first deploy (v1) and, when a chain needs it, of the change on top (v2)."""
    project = write_crash_project(root / "ref", "ref", url)
    first = _apply(project, "ref", engine)
    assert first.code == 0, first.output
    physical = [f"sparkmesh__ref_{schema}.ref_{schema}__{name}" for schema, name in (("raw", "events"), ("shop", "daily"))]
    assert format_problems(engine, [_table_named(engine, prefix) for prefix in physical]) == []
    if not any(chain.update for chain in CHAINS):
        return first.views, {}
    _set_daily_total(project, V2_TOTAL)
    second = _apply(project, "ref", engine)
    assert second.code == 0, second.output
    return first.views, second.views


def test_sigkill_at_every_stage_then_resume_equals_uninterrupted_run(tmp_path, connect_server, remote_engine):
    assert {c.at.split(":")[0] for chain in CHAINS for c in chain.crashes} == set(STAGES)
    # One after the other: concurrent applies on one small server slowed each other down past any budget.
    v1, v2 = _reference(tmp_path, connect_server.url, remote_engine)
    runs = {chain: _run_chain(chain, tmp_path, connect_server.url, remote_engine) for chain in CHAINS}
    assert all(v1[view] is not None and v1[view][0] > 0 for view in CRASH_VIEWS), v1
    assert not v2 or (v1["shop.daily"] != v2["shop.daily"] and v1["raw.events"] == v2["raw.events"])
    failures = [f"{chain.name}: {problem}" for chain, steps in runs.items() for problem in _problems(chain, steps, v1, v2)]
    _print_report(runs, failures)
    assert not failures, "\n".join(failures)


def _table_named(engine, prefix: str) -> str:
    """The one physical table whose name starts with ``schema.prefix`` (its version follows)."""
    schema, start = prefix.split(".")
    found = [name for name in engine.catalog.list_tables(schema) if name.startswith(start + "__") and "__data" not in name]
    assert len(found) == 1, found
    return f"{schema}.{found[0]}"


def _problems(chain: Chain, steps: list[Step], v1: dict, v2: dict) -> list[str]:
    problems = []
    for step in steps[:-1]:
        if step.code != -9:
            problems.append(f"{step.crash.at}: the child was not killed (exit {step.code}): {step.output[-600:]}")
        for view in CRASH_VIEWS:
            # A view may be missing only before the first promotion; when it exists it shows a complete table.
            allowed = (v1[view], v2[view]) if chain.update else (None, v1[view])
            if step.views[view] not in allowed:
                problems.append(f"{step.crash.at}: {view} showed {step.views[view]}, expected one of {allowed}")
    last = steps[-1]
    if last.code != 0:
        problems.append(f"the final run failed (exit {last.code}): {last.output[-800:]}")
    wanted = v2 if chain.update else v1
    if last.views != wanted:
        problems.append(f"after the final run: {last.views} != uninterrupted {wanted}")
    return problems


def _print_report(runs: dict[Chain, list[Step]], failures: list[str]) -> None:
    """A JSON line per kill (seen with -s; bench/reliability_report.py builds its table from them)."""
    for chain, steps in runs.items():
        for step in steps[:-1]:
            failed = any(f.startswith(f"{chain.name}: {step.crash.at}") for f in failures)
            row = {"chain": chain.name, "crash_at": step.crash.at, "delay": step.crash.delay,
                   "killed": step.code == -9, "views_complete": not failed}
            print("CRASH " + json.dumps(row))
        resumed = not any(f.startswith(f"{chain.name}: ") and "final run" in f for f in failures)
        print("CRASH " + json.dumps({"chain": chain.name, "resumed_identical": resumed}))
