"""Many writers on the same state: threads with their own stores, and separate processes (invariant 7)."""

from __future__ import annotations

import multiprocessing
import threading
from datetime import datetime, timedelta

import pytest

from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.state import interval_rows
from dagster_sparkmesh.state.connection import write_transaction

START = datetime(2024, 1, 1)


def hour(number: int) -> Interval:
    return Interval(start=START + timedelta(hours=number), end=START + timedelta(hours=number + 1))


def _write_every_other_hour(state_location, first: int, count: int, stride: int) -> None:
    store = state_location.open()
    try:
        for number in range(first, count, stride):
            store.add_interval("db.events", "v1", hour(number))
    finally:
        store.close()


def _run_threads(target, arguments: list[tuple]) -> None:
    threads = [threading.Thread(target=target, args=args) for args in arguments]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_concurrent_thread_writers_lose_no_interval(state_location):
    writers = 4
    _run_threads(_write_every_other_hour, [(state_location, w, 120, writers) for w in range(writers)])
    store = state_location.open()
    assert store.get_intervals("db.events", "v1") == [Interval(start=START, end=START + timedelta(hours=120))]
    store.close()


def test_concurrent_process_writers_lose_no_interval(state_location):
    # fork: the test module is not importable by name in a spawned child under --import-mode=importlib.
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_write_every_other_hour, args=(state_location, w, 60, 2)) for w in range(2)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
    assert [process.exitcode for process in processes] == [0, 0]
    store = state_location.open()
    assert store.get_intervals("db.events", "v1") == [Interval(start=START, end=START + timedelta(hours=60))]
    store.close()


def test_removals_racing_with_removals_and_appends_are_all_applied(state_location):
    store = state_location.open()
    store.add_interval("db.events", "v1", Interval(start=START, end=START + timedelta(hours=40)))
    removed = [hour(n) for n in range(0, 40, 4)]

    def remove(interval: Interval) -> None:
        own = state_location.open()
        own.remove_intervals("db.events", "v1", interval)
        own.close()

    def add(number: int) -> None:
        own = state_location.open()
        own.add_interval("db.events", "v1", hour(number))
        own.close()

    threads = [threading.Thread(target=remove, args=(i,)) for i in removed]
    threads += [threading.Thread(target=add, args=(n,)) for n in range(40, 48)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = [hour(n) for n in range(48) if hour(n) not in removed]
    assert store.missing_intervals("db.events", "v1", expected) == []
    assert store.missing_intervals("db.events", "v1", removed) == removed
    store.close()


def test_an_exception_inside_a_transaction_leaves_nothing_written(state_store):
    with pytest.raises(RuntimeError, match="crash"):
        with write_transaction(state_store.engine) as connection:
            interval_rows.append(connection, "db.events", "v1", [hour(0), hour(1)], START)
            interval_rows.remove(connection, "db.events", "v1", hour(0), START)
            raise RuntimeError("crash between two writes")
    assert state_store.get_intervals("db.events", "v1") == []


def test_threads_opening_a_new_sqlite_state_at_once_all_get_it(tmp_path):
    # The first connection switches the new file to WAL; the others used to fail at once with "database is locked".
    from dagster_sparkmesh.state import open_state_store

    for trial in range(40):
        project = tmp_path / f"project_{trial}"
        errors: list[BaseException] = []

        def open_and_close() -> None:
            try:
                open_state_store(None, project).close()
            except BaseException as error:  # noqa: BLE001 - collected for the assertion
                errors.append(error)

        _run_threads(open_and_close, [() for _ in range(6)])
        assert errors == []
