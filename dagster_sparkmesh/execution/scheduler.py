"""Run a DAG of tasks: each starts once its parents finished, independent ones in parallel.

When a task fails, its descendants are not started (their inputs would be wrong); unrelated branches go on, so
one failing model does not waste the work of the others. Errors are re-raised after everything settles.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")


class DagRunError(Exception):
    def __init__(self, errors: dict[str, BaseException], results: dict[str, object], blocked: set[str]) -> None:
        first = next(iter(errors.values()))
        super().__init__(str(first))
        self.errors = errors
        self.results = results
        self.blocked = blocked


def run_dag(
    parents: Mapping[str, set[str]],
    task: Callable[[str], T],
    *,
    max_workers: int = 2,
    should_stop: Callable[[], bool] = lambda: False,
) -> dict[str, T]:
    """Run ``task(name)`` for every name in ``parents`` (insertion order = topological order).

    At most ``max_workers`` tasks run; of the ready ones, those with the longest chain of descendants start first
    (then in topological order): the chain that ends the run last starts as early as it can."""
    workers = max(1, max_workers)
    height = _chain_lengths(parents)
    pending = dict(parents)
    results: dict[str, T] = {}
    errors: dict[str, BaseException] = {}
    blocked: set[str] = set()
    running: dict[Future, str] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sparkmesh") as pool:
        while pending or running:
            ready = sorted((n for n, ps in pending.items() if ps <= results.keys()), key=lambda n: -height[n])
            for name in ready[: workers - len(running)] if not should_stop() else ():
                del pending[name]
                running[pool.submit(task, name)] = name
            for name in [n for n, ps in pending.items() if ps & (errors.keys() | blocked)]:
                del pending[name]
                blocked.add(name)
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                name = running.pop(future)
                try:
                    results[name] = future.result()
                except BaseException as error:  # noqa: BLE001 - collected and re-raised below
                    errors[name] = error
    if errors:
        raise DagRunError(errors, dict(results), blocked | set(pending))
    return results


def _chain_lengths(parents: Mapping[str, set[str]]) -> dict[str, int]:
    """Name → the number of tasks on its longest chain of descendants, itself included."""
    length = dict.fromkeys(parents, 1)
    for name in reversed(list(parents)):  # children come after their parents
        for parent in parents[name]:
            if parent in length:
                length[parent] = max(length[parent], length[name] + 1)
    return length
