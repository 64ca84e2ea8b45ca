"""Several Dagster runs writing different partition ranges of the same models at once, on SQLite and PostgreSQL state.

Three child processes each run ``dg.materialize`` of the same three chained daily models over their own three days,
started together against the suite's shared Spark Connect server, with one persistent Dagster instance and one
state store. None of the physical tables exists when they start, so all three race to create each table, push the
same snapshots and append interval rows. Afterwards every run must have succeeded (Dagster's run record and one
materialization per model and partition), every day must be recorded exactly once per model, every day must hold
exactly its rows (nothing lost, nothing doubled), and the physical tables must be the only tables created.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa
from dagster._core.storage.dagster_run import DagsterRunStatus

from dagster_sparkmesh.snapshot.naming import period_data_table
from dagster_sparkmesh.state.schema import intervals as interval_table
from dagster_sparkmesh.state.store import open_state_store
from reliability_harness import (  # registered by conftest.py
    RANGE_MODEL_NAMES,
    RANGE_SCHEMAS,
    dagster_home,
    drop_range_schemas,
    expected_rows_per_day,
    finish_range_run,
    format_problems,
    fresh_postgres_database,
    physical_tables_of,
    range_model,
    rows_per_day,
    start_range_run,
    write_range_project,
)

pytestmark = pytest.mark.every_layout  # `./dev test` runs it again on Iceberg and Delta tables

RANGES = (("2024-01-01", "2024-01-03"), ("2024-01-04", "2024-01-06"), ("2024-01-07", "2024-01-09"))
ALL_DAYS = [f"2024-01-{day:02d}" for day in range(1, 10)]


@pytest.fixture(params=["sqlite", "postgres"])
def state_backend(request):
    """(backend, state URL): None is the project's own SQLite file; PostgreSQL gets a database of its own."""
    if request.param == "sqlite":
        yield "sqlite", None
        return
    with fresh_postgres_database(f"sparkmesh_concurrent_{uuid.uuid4().hex[:10]}") as url:
        yield "postgres", url


def test_three_range_runs_at_once_record_every_interval_and_every_row_exactly_once(
    state_backend, tmp_path: Path, connect_server, remote_engine
):
    backend, state_url = state_backend
    prefix = f"conc_{backend}_{uuid.uuid4().hex[:6]}"
    project = write_range_project(tmp_path / "project", prefix, connect_server.url)
    home = dagster_home(tmp_path / "dagster_home")
    try:
        began = time.monotonic()
        children = [start_range_run(project, home, first=first, last=last, state_url=state_url) for first, last in RANGES]
        runs = [finish_range_run(child) for child in children]
        seconds = round(time.monotonic() - began, 1)
        problems = [f"run {r}: exit {run.code}\n{run.output[-3000:]}" for r, run in zip(RANGES, runs) if run.code != 0]
        if not problems:
            problems += _dagster_problems(home, [run.run_id for run in runs])
            problems += _data_problems(project, prefix, state_url, remote_engine)
        _report(backend, seconds, problems)
        assert not problems, "\n".join(problems)
    finally:
        drop_range_schemas(remote_engine, prefix)


def _dagster_problems(home: Path, run_ids: list[str]) -> list[str]:
    """Each run succeeded and materialized every model for each of its partitions, once."""
    problems = []
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for (first, last), run_id in zip(RANGES, run_ids):
            run = instance.get_run_by_id(run_id)
            if run is None or run.status != DagsterRunStatus.SUCCESS:
                problems.append(f"run {run_id} ({first}..{last}): {run and run.status}")
                continue
            records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
            seen = sorted(
                (r.event_log_entry.asset_materialization.asset_key.path[-1], r.event_log_entry.asset_materialization.partition)
                for r in records
            )
            days = [day for day in ALL_DAYS if first <= day <= last]
            wanted = sorted((name.split(".")[1], day) for name in RANGE_MODEL_NAMES for day in days)
            if seen != wanted:
                problems.append(f"run {run_id} ({first}..{last}) materialized {seen}, expected {wanted}")
    return problems


def _data_problems(project: Path, prefix: str, state_url: str | None, engine) -> list[str]:
    problems = []
    with open_state_store(state_url, project) as state:
        tables = physical_tables_of(state, prefix)
        recorded = _interval_rows(state)
    problems += format_problems(engine, list(tables.values()))
    for name, table in tables.items():
        model = range_model(prefix, name)
        days = sorted(start[:10] for row_model, start in recorded if row_model == model)
        if days != ALL_DAYS:  # one append per day and run: a day recorded twice or never shows here
            problems.append(f"{name}: interval rows for days {days}, expected each of {ALL_DAYS} once")
        found, wanted = rows_per_day(engine, table), expected_rows_per_day(name)
        if found != wanted:
            problems.append(f"{name}: rows per day {found}, expected {wanted}")
    for schema in RANGE_SCHEMAS:
        created = set(engine.catalog.list_tables(f"sparkmesh__{prefix}_{schema}"))
        wanted_tables = {t.split(".")[1] for t in tables.values() if t.startswith(f"sparkmesh__{prefix}_{schema}.")}
        # A period table's physical table is a view over its data table (``engine.period_tables``).
        allowed = wanted_tables | {period_data_table(t) for t in wanted_tables}
        if not wanted_tables <= created or not created <= allowed:
            problems.append(f"physical schema {schema}: tables {sorted(created)}, expected {sorted(wanted_tables)}")
        if engine.catalog.list_schema(f"{prefix}_{schema}") is not None:
            problems.append(f"the view schema {prefix}_{schema} exists, but nothing was promoted")
    return problems


def _interval_rows(state) -> list[tuple[str, str]]:
    """The raw, unmerged interval rows (model, start): merging on read would hide a duplicate."""
    with state.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(sa.select(interval_table.c.name, interval_table.c.start_ts))]


def _report(backend: str, seconds: float, problems: list[str]) -> None:
    """A JSON line per scenario (seen with -s; bench/reliability_report.py builds its table from them)."""
    rows_checked = sum(sum(expected_rows_per_day(name).values()) for name in RANGE_MODEL_NAMES)
    row = {
        "scenario": f"{len(RANGES)} Dagster range runs at once, {backend} state",
        "runs": len(RANGES),
        "intervals": len(ALL_DAYS) * len(RANGE_MODEL_NAMES),
        "rows_checked": rows_checked,
        "seconds": seconds,
        "ok": not problems,
    }
    print("\nRACE " + json.dumps(row))  # own line: pytest -q prints progress dots without a newline
