"""Table write locks on both backends: one interval write into a table at a time; a dead or expired holder's lock
is taken over."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import datetime

from dagster_sparkmesh.state import LeaseHolder
from dagster_sparkmesh.state.connection import write_transaction
from dagster_sparkmesh.state.write_locks import WRITE_LOCK_DURATION, try_acquire


def test_a_second_writer_waits_until_the_first_gives_the_lock_back(state_store):
    order: list[str] = []
    first_holds = threading.Event()

    def first() -> None:
        with state_store.table_write_lock("s.t__v1"):
            first_holds.set()
            order.append("first in")
            time.sleep(0.6)
            order.append("first out")

    thread = threading.Thread(target=first)
    thread.start()
    first_holds.wait(5)
    assert state_store.table_write_lock_holder("s.t__v1") == LeaseHolder.current()
    with state_store.table_write_lock("s.t__v1", poll_seconds=0.05):
        order.append("second in")
    thread.join()
    assert order == ["first in", "first out", "second in"]
    assert state_store.table_write_lock_holder("s.t__v1") is None


def test_locks_of_different_tables_are_held_at_once(state_store):
    with state_store.table_write_lock("s.a__v1"), state_store.table_write_lock("s.b__v1"):
        assert state_store.table_write_lock_holder("s.a__v1") == LeaseHolder.current()
        assert state_store.table_write_lock_holder("s.b__v1") == LeaseHolder.current()
    assert state_store.table_write_lock_holder("s.a__v1") is None


def test_a_lock_left_by_a_dead_process_or_expired_is_taken_over(state_store):
    dead_pid = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout)
    me = LeaseHolder.current()
    dead = me.model_copy(update={"pid": dead_pid})
    elsewhere = me.model_copy(update={"host": "another-host"})
    now = datetime(2024, 6, 1, 12)
    with write_transaction(state_store._engine) as connection:
        assert try_acquire(connection, "s.t__v1", dead, now) is not None
        assert try_acquire(connection, "s.t__v1", me, now) is not None  # its holder is gone: taken over
        assert try_acquire(connection, "s.u__v1", elsewhere, now) is not None
        assert try_acquire(connection, "s.u__v1", me, now) is None  # a live holder, maybe, on another host
        assert try_acquire(connection, "s.u__v1", me, now + WRITE_LOCK_DURATION) is not None  # expired
