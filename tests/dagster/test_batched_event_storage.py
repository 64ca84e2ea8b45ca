"""BatchedSqliteEventLogStorage against the stock SQLite event log: the same ranged runs, the same records.

Ranged runs (one run over a range of daily partitions, ``BackfillPolicy.single_run``) of a no-op asset with an asset
check: a success, a failing step, a run aborted as the UI's Terminate does (the run marked CANCELING, then the
interrupt the run worker turns SIGINT into), and a re-execution of the failed run from failure. After each run both
instances must agree on partition statuses, materializations, asset records, asset-check executions and the rows
of the index database; a replay stores the events of real runs one by one and in mixed batches and compares every
row. No Spark.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.errors import DagsterExecutionInterruptedError
from dagster._core.storage.dagster_run import DagsterRunStatus
from dagster._core.storage.event_log.base import EventLogRecord
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster_shared.serdes import deserialize_value
from sqlalchemy import event as sa_event
from sqlalchemy.engine import Engine

from dagster_sparkmesh.dagster import event_storage
from dagster_sparkmesh.dagster.event_storage import (
    BATCH_SIZE_ENV,
    EVENT_BATCH_SIZE,
    BatchedSqliteEventLogStorage,
    batched_instance_yaml,
    dagster_version_supported,
)

DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", end_date="2024-02-10")  # 40 partitions
KEYS = DAYS.get_partition_keys()
KEY = dg.AssetKey("daily")
CHECK = dg.AssetCheckKey(KEY, "rows")
OUTCOME = "test/outcome"


@dg.asset(
    partitions_def=DAYS,
    backfill_policy=dg.BackfillPolicy.single_run(),
    check_specs=[dg.AssetCheckSpec("rows", asset="daily")],
)
def daily(context):  # no annotation: with postponed annotations Dagster sees a string
    outcome = context.run.tags.get(OUTCOME, "success")
    if outcome == "fail":
        raise RuntimeError("the step fails")
    if outcome == "abort":  # the UI's Terminate: the run is marked CANCELING, the worker gets interrupted
        context.instance.report_run_canceling(context.run)
        raise DagsterExecutionInterruptedError()
    yield dg.MaterializeResult()
    yield dg.AssetCheckResult(passed=True)


def ranged_job() -> dg.JobDefinition:
    job = dg.define_asset_job("ranged", selection=[KEY], executor_def=dg.in_process_executor)
    return dg.Definitions(assets=[daily], jobs=[job]).resolve_job_def("ranged")


@contextmanager
def instance(home: Path, batched: bool) -> Iterator[dg.DagsterInstance]:
    home.mkdir(parents=True, exist_ok=True)
    runs_dir = home / "history" / "runs"  # the stock layout: the two instances differ by their event log class
    overrides = yaml.safe_load(batched_instance_yaml(str(runs_dir))) if batched else {}
    with dg.instance_for_test(temp_dir=str(home), overrides=overrides) as result:
        expected = BatchedSqliteEventLogStorage if batched else SqliteEventLogStorage
        assert type(result.event_log_storage) is expected
        yield result


def ranged_run(inst: dg.DagsterInstance, first: str, last: str, outcome: str = "success") -> str:
    tags = {"dagster/asset_partition_range_start": first, "dagster/asset_partition_range_end": last, OUTCOME: outcome}
    return ranged_job().execute_in_process(instance=inst, tags=tags, raise_on_error=False).run_id


def rerun_from_failure(inst: dg.DagsterInstance, failed_run_id: str) -> str:
    """The UI's "Re-execute from failure": the failed run's tags (its partition range) and its failed step."""
    options = dg.ReexecutionOptions.from_failure(failed_run_id, inst)
    parent = inst.get_run_by_id(failed_run_id).tags
    tags = {**{k: v for k, v in parent.items() if k.startswith("dagster/asset_partition_range")}, OUTCOME: "success"}
    result = dg.execute_job(dg.reconstructable(ranged_job), inst, reexecution_options=options, tags=tags)
    return result.run_id


def history(inst: dg.DagsterInstance) -> list[dict]:
    """Four ranged runs, and what the instance says after each."""
    states = []
    ranged_run(inst, KEYS[0], KEYS[29])  # 30 partitions
    states.append(state(inst))
    failed = ranged_run(inst, KEYS[20], KEYS[39], "fail")  # 10 materialized before, 10 new
    states.append(state(inst))
    ranged_run(inst, KEYS[0], KEYS[9], "abort")
    states.append(state(inst))
    rerun_from_failure(inst, failed)
    states.append(state(inst))
    return states


def state(inst: dg.DagsterInstance) -> dict:
    runs = [run.run_id for run in reversed(inst.get_runs())]  # oldest first: run ids differ between instances
    nth = {run_id: n for n, run_id in enumerate(runs)}
    storage = inst.event_log_storage
    records = inst.fetch_materializations(KEY, limit=1000).records
    entry = inst.get_asset_records([KEY])[0].asset_entry
    last = entry.last_materialization_record
    attempts = storage.get_latest_asset_partition_materialization_attempts_without_materializations(KEY)
    checks = storage.get_asset_check_execution_history(CHECK, limit=1000)
    return {
        "run statuses": [inst.get_run_by_id(run_id).status for run_id in runs],
        "partition statuses": inst.get_status_by_partition(KEY, KEYS, DAYS),
        "materialized": sorted(inst.get_materialized_partitions(KEY)),
        "materializations": Counter((nth[r.run_id], r.partition_key) for r in records),
        "materialization ids": [r.storage_id for r in records],
        "last materialization": (nth[last.run_id], last.partition_key, last.storage_id),
        "last run": nth[entry.last_run_id],
        "planned": [
            (info.run_id and nth[info.run_id], info.storage_id)
            for info in (inst.get_latest_planned_materialization_info(KEY, key) for key in KEYS)
            if info
        ],
        "unmaterialized attempts": {p: (nth[run_id], sid) for p, (run_id, sid) in attempts.items()},
        "check executions": [(c.id, nth[c.run_id], c.status, c.partition, c.event and c.event.dagster_event_type)
                             for c in checks],
        "index rows": index_rows(Path(storage._base_dir), nth),  # noqa: SLF001
    }


def index_rows(runs_dir: Path, nth: dict[str, int]) -> dict[str, list]:
    """The index database's rows that events write, with run numbers for run ids and without timestamps."""

    def last_materialization(text):
        record = text and deserialize_value(text, EventLogRecord)
        return record and (record.storage_id, record.partition_key, nth[record.run_id])

    with closing_db(runs_dir / "index.db") as db:
        return {
            "event_logs": [(i, nth.get(run, run), kind, step, asset, part) for i, run, kind, step, asset, part in
                           db.execute("SELECT id, run_id, dagster_event_type, step_key, asset_key, partition "
                                      "FROM event_logs ORDER BY id")],
            "asset_keys": [(key, last_materialization(last), nth.get(run), stamp is not None, cache) for
                           key, last, run, stamp, cache in
                           db.execute("SELECT asset_key, last_materialization, last_run_id, "
                                      "last_materialization_timestamp, cached_status_data FROM asset_keys")],
            "asset_event_tags": db.execute("SELECT id, event_id, asset_key, key FROM asset_event_tags ORDER BY id")
            .fetchall(),
            "asset_check_executions": [(*row[:4], nth.get(row[4]), *row[5:]) for row in db.execute(
                "SELECT id, asset_key, check_name, partition, run_id, execution_status, evaluation_event_storage_id, "
                "materialization_event_storage_id FROM asset_check_executions ORDER BY id")],
        }


@contextmanager
def closing_db(path: Path) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def batch_size(monkeypatch) -> int:
    monkeypatch.setenv(BATCH_SIZE_ENV, "1000")
    return 1000


def test_ranged_runs_leave_the_same_records_on_both_stores(tmp_path, batch_size):
    with instance(tmp_path / "stock", batched=False) as stock:
        expected = history(stock)
    with instance(tmp_path / "batched", batched=True) as batched:
        actual = history(batched)
    for step, (want, got) in enumerate(zip(expected, actual, strict=True)):
        for what in want:
            assert got[what] == want[what], f"after run {step + 1}: {what}"

    success, failed, aborted, rerun = actual
    assert success["run statuses"] == [DagsterRunStatus.SUCCESS]
    assert success["materialized"] == KEYS[:30]
    assert failed["run statuses"][-1] == DagsterRunStatus.FAILURE
    # per-partition planned events: each partition of the failed run shows as failed, 10 of them materialized before
    assert {k for k, s in failed["partition statuses"].items() if s == dg.AssetPartitionStatus.FAILED} == set(KEYS[20:])
    assert len(failed["unmaterialized attempts"]) == 20
    assert aborted["run statuses"][-1] == DagsterRunStatus.CANCELED
    assert {p for p, (run, _) in aborted["unmaterialized attempts"].items() if run == 2} == set(KEYS[:10])
    assert rerun["run statuses"][-1] == DagsterRunStatus.SUCCESS
    assert rerun["materialized"] == KEYS
    assert set(rerun["partition statuses"].values()) == {dg.AssetPartitionStatus.MATERIALIZED}
    assert sum(rerun["materializations"].values()) == 30 + 20
    assert rerun["last run"] == 3 and rerun["last materialization"][:2] == (3, KEYS[-1])
    planned_rows = [row for row in rerun["check executions"] if row[1] == 3 and row[3] is not None]
    assert len(planned_rows) == 20  # the check's planned row of every partition of the re-run


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> tuple[list, dict[str, list]]:
    """The events of three real ranged runs (success, failure, re-run from failure) in the order they were stored,
    and the rows that storing them one by one in a stock store leaves."""
    home = tmp_path_factory.mktemp("replay")
    with pytest.MonkeyPatch.context() as env:
        env.setenv(BATCH_SIZE_ENV, "1000")
        with instance(home / "source", batched=False) as inst:
            run_ids = [ranged_run(inst, KEYS[0], KEYS[9]), ranged_run(inst, KEYS[5], KEYS[14], "fail")]
            run_ids.append(rerun_from_failure(inst, run_ids[1]))
            events = [event for run_id in run_ids for event in inst.all_logs(run_id)]
    one_by_one = SqliteEventLogStorage(str(home / "one_by_one"))
    for event in events:
        one_by_one.store_event(event)
    return events, all_rows(home / "one_by_one")


CLOCK = {"create_timestamp", "migration_completed"}


def all_rows(runs_dir: Path) -> dict[str, list]:
    """Every row of every database of an event log, but for the clock at creation (rows, migrations)."""
    rows = {}
    for path in sorted(runs_dir.glob("*.db")):
        with closing_db(path) as db:
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
                columns = [f'"{c[1]}"' for c in db.execute(f"PRAGMA table_info({table})") if c[1] not in CLOCK]
                rows[f"{path.name}:{table}"] = db.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
    return rows


@pytest.mark.parametrize("size", [7, 10_000])
def test_mixed_batches_end_in_the_rows_of_storing_events_one_by_one(tmp_path, replayed, size):
    events, expected = replayed
    kinds = Counter(e.dagster_event_type for e in events)
    assert kinds[dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED] == 30
    assert kinds[dg.DagsterEventType.ASSET_CHECK_EVALUATION_PLANNED] == 3
    batched = BatchedSqliteEventLogStorage(str(tmp_path / "batched"))
    for start in range(0, len(events), size):
        batched.store_event_batch(events[start : start + size])
    actual = all_rows(tmp_path / "batched")
    assert sum(len(rows) for rows in expected.values()) > 100
    assert actual.keys() == expected.keys()
    for table in expected:
        assert actual[table] == expected[table], table


def test_a_watcher_sees_every_event_of_a_batch_in_order(tmp_path, replayed):
    events, _ = replayed
    run_events = [event for event in events if event.run_id == events[0].run_id]
    storage = BatchedSqliteEventLogStorage(str(tmp_path))
    seen = []
    storage.watch(events[0].run_id, None, lambda event, cursor: seen.append(event))  # what the UI's run page uses
    try:
        storage.store_event_batch(run_events)
        deadline = time.monotonic() + 15
        while len(seen) < len(run_events) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        storage.dispose()
    assert seen == run_events


def test_a_failed_index_transaction_falls_back_to_one_event_at_a_time(tmp_path, replayed, monkeypatch):
    events, expected = replayed
    batched = BatchedSqliteEventLogStorage(str(tmp_path / "batched"))
    calls = Counter()
    store_tags = BatchedSqliteEventLogStorage._store_asset_event_tags

    def failing_once(self, conn, tagged, ids):
        calls["tags"] += 1
        if calls["tags"] == 1:  # after the rows of the stretch were inserted: they must be rolled back
            raise RuntimeError("disk full")
        return store_tags(self, conn, tagged, ids)

    monkeypatch.setattr(BatchedSqliteEventLogStorage, "_store_asset_event_tags", failing_once)
    with pytest.warns(UserWarning, match="index database failed"):
        batched.store_event_batch(events)
    assert calls["tags"] > 1
    assert all_rows(tmp_path / "batched") == expected


def test_the_batched_store_commits_far_less_often(tmp_path, batch_size):
    def write_transactions_of_a_30_partition_run(batched: bool) -> tuple[int, int]:
        home = tmp_path / ("batched" if batched else "stock")
        event_log = str(home / "history" / "runs")
        writing, count, lock = set(), Counter(), threading.Lock()

        def on_execute(conn, cursor, statement, *args):
            if event_log in str(conn.engine.url.database) and statement.lstrip().upper().startswith(WRITES):
                with lock:
                    writing.add(id(conn))

        def on_commit(conn):
            with lock:
                if id(conn) in writing:
                    writing.discard(id(conn))
                    count["write transactions"] += 1

        with instance(home, batched) as inst:
            sa_event.listen(Engine, "before_cursor_execute", on_execute)
            sa_event.listen(Engine, "commit", on_commit)
            try:
                run_id = ranged_run(inst, KEYS[0], KEYS[29])
            finally:
                sa_event.remove(Engine, "before_cursor_execute", on_execute)
                sa_event.remove(Engine, "commit", on_commit)
            return count["write transactions"], len(inst.all_logs(run_id))

    stock_writes, events = write_transactions_of_a_30_partition_run(batched=False)
    batched_writes, batched_events = write_transactions_of_a_30_partition_run(batched=True)
    assert batched_events == events > 60  # 30 planned + 30 materializations + the run's other events
    assert stock_writes >= events + 60  # the stock store: one per event, another for each asset event's index rows
    # batched: the 61 planned and materialization events in 2 stretches of 2 transactions; the other events as before
    assert batched_writes <= events // 2 and batched_writes * 4 <= stock_writes, (batched_writes, stock_writes, events)


WRITES = ("INSERT", "UPDATE", "DELETE")


def test_the_instance_yaml_selects_the_store_and_sets_the_batch_size(tmp_path, monkeypatch):
    monkeypatch.delenv(BATCH_SIZE_ENV, raising=False)
    snippet = batched_instance_yaml(str(tmp_path / "history" / "runs"))
    assert "module: dagster_sparkmesh.dagster.event_storage" in snippet
    (tmp_path / "dagster.yaml").write_text(snippet)
    with dg.DagsterInstance.from_config(str(tmp_path)) as inst:
        assert isinstance(inst.event_log_storage, BatchedSqliteEventLogStorage)
        assert inst.event_log_storage.inst_data.class_name == "BatchedSqliteEventLogStorage"
        assert os.environ[BATCH_SIZE_ENV] == str(EVENT_BATCH_SIZE)
    monkeypatch.setenv(BATCH_SIZE_ENV, "0")  # a value set beforehand wins: 0 turns batching off
    BatchedSqliteEventLogStorage(str(tmp_path / "other"))
    assert os.environ[BATCH_SIZE_ENV] == "0"


def test_outside_the_supported_dagster_range_it_warns_and_stores_one_event_at_a_time(tmp_path, monkeypatch):
    assert dagster_version_supported("1.13.0") and dagster_version_supported(dg.__version__)
    assert not dagster_version_supported("1.14.0")
    assert not dagster_version_supported("1.12.9")
    assert not dagster_version_supported("1!0+dev")
    monkeypatch.setattr(event_storage, "dagster_version_supported", lambda: False)
    with pytest.warns(UserWarning, match="supports dagster >=1.13,<1.14"):
        storage = BatchedSqliteEventLogStorage(str(tmp_path))
    stored = []
    monkeypatch.setattr(storage, "store_event", stored.append)
    storage.store_event_batch([object()] * 3)  # store_event is a spy: any three objects will do
    assert len(stored) == 3
