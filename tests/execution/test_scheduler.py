"""The DAG runner: parents first, a failure blocks only its descendants, the longest chain starts first."""

import threading

import pytest

from dagster_sparkmesh.execution.scheduler import DagRunError, run_dag


def test_of_the_ready_tasks_the_longest_chain_starts_first():
    # a and b are ready at once; b heads the chain b -> c -> d, so it starts first with one worker (in topological
    # order it would run a, b, e, c, d); then a and c tie (two tasks each) and go in topological order.
    parents = {"a": set(), "b": set(), "c": {"b"}, "d": {"c"}, "e": {"a"}}
    started = []
    run_dag(parents, started.append, max_workers=1)
    assert started == ["b", "a", "c", "d", "e"]


def test_no_more_tasks_run_at_once_than_workers_and_parents_finish_first():
    parents = {f"t{i}": set() for i in range(6)} | {"last": {f"t{i}" for i in range(6)}}
    lock, running, peak, order = threading.Lock(), [0], [0], []

    def task(name):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            order.append(name)
        threading.Event().wait(0.02)
        with lock:
            running[0] -= 1
        return name.upper()

    results = run_dag(parents, task, max_workers=2)
    assert peak[0] == 2 and order[-1] == "last" and results["last"] == "LAST"


def test_a_failure_blocks_its_descendants_and_the_rest_runs():
    parents = {"bad": set(), "child": {"bad"}, "other": set()}

    def task(name):
        if name == "bad":
            raise ValueError("boom")
        return name

    with pytest.raises(DagRunError) as raised:
        run_dag(parents, task)
    assert set(raised.value.errors) == {"bad"} and raised.value.blocked == {"child"}
    assert raised.value.results == {"other": "other"}
