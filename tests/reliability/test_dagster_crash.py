"""A Dagster range run SIGKILLed mid-way, then re-launched: only the missing intervals are computed, and the result
equals an uninterrupted run.

The killed run is a child process running ``dg.materialize`` of three chained daily models over nine days in
2-day batches; it dies during the write of an ``enriched`` batch (``SPARKMESH_CRASH_AT`` with a delay), after
``orders`` and a first ``enriched`` batch were recorded. Meanwhile an uninterrupted run of the same models, in a
project of its own, gives the reference data. Then:
- promoting the killed project's environment fails before any view exists (intervals missing);
- a re-launched run succeeds and computes exactly the intervals that were not recorded at the kill (its
  materialization metadata) while the interval rows recorded before the kill stay as they were;
- after promotion, every view equals the uninterrupted run's table (row count and checksum over all columns).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa

from dagster_sparkmesh.state.schema import intervals as interval_table
from dagster_sparkmesh.state.store import open_state_store
from reliability_harness import (  # registered by conftest.py
    RANGE_DAYS,
    RANGE_MODEL_NAMES,
    checksum,
    dagster_home,
    days_recorded,
    drop_range_schemas,
    finish_range_run,
    physical_tables_of,
    range_model,
    start_range_run,
    write_range_project,
)

FIRST, LAST = "2024-01-01", "2024-01-09"
BATCH_DAYS = 2
# Batch writes in DAG order: orders 1-5 (all nine days), enriched 6-10. Die 0.5 s into the write of enriched's
# second batch (days 3-4), whether it has finished by then or not.
KILL = {"SPARKMESH_CRASH_AT": "interval_write:7", "SPARKMESH_CRASH_DELAY": "0.5"}


def test_killed_range_run_relaunch_computes_only_missing_intervals_and_equals_uninterrupted_run(
    tmp_path: Path, connect_server, remote_engine
):
    tag = uuid.uuid4().hex[:6]
    crashed, reference = f"kill_{tag}", f"ref_{tag}"
    project = write_range_project(tmp_path / "killed", crashed, connect_server.url, batch_size=BATCH_DAYS)
    ref_project = write_range_project(tmp_path / "reference", reference, connect_server.url, batch_size=BATCH_DAYS)
    home = dagster_home(tmp_path / "dagster_home")
    seen: dict = {"began": time.monotonic(), "ok": False}
    try:
        killed = start_range_run(project, home, first=FIRST, last=LAST, env=KILL)
        uninterrupted = start_range_run(ref_project, home, first=FIRST, last=LAST)
        killed_run, reference_run = finish_range_run(killed), finish_range_run(uninterrupted)
        assert killed_run.code == -9, killed_run.output[-3000:]
        assert reference_run.code == 0, reference_run.output[-3000:]

        with open_state_store(None, project) as state:
            versions = {name: _version(state, range_model(crashed, name)) for name in RANGE_MODEL_NAMES}
            kept = {name: days_recorded(state, range_model(crashed, name), v) for name, v in versions.items()}
            rows_at_kill = _interval_rows(state)
        assert len(kept["src.orders"]) == RANGE_DAYS and 0 < len(kept["shop.enriched"]) < RANGE_DAYS, kept
        assert kept["shop.daily"] == [], kept
        seen["kept"] = kept

        refused = finish_range_run(start_range_run(project, home))
        assert refused.code == 1 and "missing" in refused.output.lower(), refused.output[-3000:]
        assert remote_engine.catalog.list_schema(f"{crashed}_shop") is None  # promotion refused before any view

        relaunched = finish_range_run(start_range_run(project, home, first=FIRST, last=LAST, resume=True))
        assert relaunched.code == 0, relaunched.output[-3000:]
        computed = _intervals_computed(home, relaunched.run_id, crashed)
        assert computed == {name: RANGE_DAYS - len(days) for name, days in kept.items()}, (computed, kept)
        seen["computed"] = computed

        with open_state_store(None, project) as state:
            assert all(
                days_recorded(state, range_model(crashed, name), v) == _all_days() for name, v in versions.items()
            )
            rows_after = _interval_rows(state)
            reference_tables = _reference_tables(ref_project, reference)
        assert set(rows_at_kill) <= set(rows_after), "an interval row recorded before the kill was rewritten"
        assert len(rows_after) == RANGE_DAYS * len(RANGE_MODEL_NAMES), rows_after  # no day recorded twice

        promoted = finish_range_run(start_range_run(project, home))
        assert promoted.code == 0, promoted.output[-3000:]
        views = {name: checksum(remote_engine, range_model(crashed, name)) for name in RANGE_MODEL_NAMES}
        wanted = {name: checksum(remote_engine, table) for name, table in reference_tables.items()}
        assert [count for count, _ in wanted.values()] == [45, 45, RANGE_DAYS], wanted  # the reference is whole
        assert views == wanted
        seen.update(rows=sum(count for count, _ in views.values()), ok=True)
    finally:
        _report(seen)
        drop_range_schemas(remote_engine, crashed)
        drop_range_schemas(remote_engine, reference)


def _all_days() -> list[str]:
    return [f"2024-01-{day:02d}" for day in range(1, RANGE_DAYS + 1)]


def _version(state, model: str) -> str:
    return next(s.version for s in state.get_snapshots_by_name([model]))


def _reference_tables(project: Path, prefix: str) -> dict[str, str]:
    with open_state_store(None, project) as state:
        return physical_tables_of(state, prefix)


def _interval_rows(state) -> list[tuple]:
    """Every raw interval row with its id and time of recording: a recomputed day would add or replace a row."""
    with state.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(sa.select(interval_table))]


def _intervals_computed(home: Path, run_id: str, prefix: str) -> dict[str, int]:
    """Model → the intervals the run computed, from its materialization metadata (the same on every partition)."""
    computed: dict[str, set[int]] = {}
    with dg.DagsterInstance.from_config(str(home)) as instance:
        records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    for record in records:
        materialization = record.event_log_entry.asset_materialization
        name = ".".join(materialization.asset_key.path[-2:]).removeprefix(f"{prefix}_")
        computed.setdefault(name, set()).add(materialization.metadata["sparkmesh/intervals"].value)
    assert all(len(values) == 1 for values in computed.values()), computed
    return {name: values.pop() for name, values in computed.items()}


def _report(seen: dict) -> None:
    """One JSON line (seen with -s; bench/reliability_report.py builds its table from it), also when a check failed."""
    row = {
        "scenario": "Dagster range run SIGKILLed mid-write, re-launched",
        "runs": 5,  # killed run, uninterrupted reference, refused promotion, re-launch, promotion
        "intervals": RANGE_DAYS * len(RANGE_MODEL_NAMES),
        "intervals_kept": sum(len(days) for days in seen.get("kept", {}).values()),
        "intervals_recomputed_after_kill": sum(seen.get("computed", {}).values()),
        "rows_checked": seen.get("rows", 0),
        "seconds": round(time.monotonic() - seen["began"], 1),
        "ok": seen["ok"],
    }
    print("\nRACE " + json.dumps(row))  # own line: pytest -q prints progress dots without a newline
