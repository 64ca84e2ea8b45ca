"""Parsing a large project's SQL model files in forked worker processes, as SQLMesh loads large projects.

Parsing and macro expansion are CPU-bound Python: one process parses ~400 model files a second here, so a cold load
of 1,000 models waits on one core while the others idle. When a load has many files to parse (cache misses) and
this process can fork safely (no thread of its own but the load time limit's watchdog: a Dagster code server or a
process holding a Spark session parses in-process), the files are parsed by forked workers, which inherit the
project's configuration and macros without pickling them, and send back the parsed records (or the error of each
file, whole: ``errors.SparkMeshError`` pickles with its file and line). Results keep the files' order.

``SPARKMESH_LOAD_WORKERS``: how many workers (1: never fork); default, one per core up to 8.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from dagster_sparkmesh.errors import ConfigError, SparkMeshError
from dagster_sparkmesh.user_exit import ExitCalled, exit_error

WORKERS_VARIABLE = "SPARKMESH_LOAD_WORKERS"
MIN_FILES = 64
"""Below this many files to parse, forking costs more than it saves."""
_WAIT_SECONDS = 0.1
"""The parent waits in short steps: the load time limit interrupts it between bytecodes, never inside one wait."""
_CHUNKS_PER_WORKER = 4

T = TypeVar("T")
_FUNCTION: Callable | None = None
"""The parse function of the current parallel load, set before the fork: the workers inherit it."""


def map_in_workers(function: Callable[[T], object], items: Sequence[T]) -> list[object]:
    """``function`` over ``items``, in order: each result, or the SparkMeshError it raised (returned, not raised)."""
    workers = worker_count(len(items))
    if workers <= 1:
        return [_outcome(function, item) for item in items]
    global _FUNCTION
    _FUNCTION = function
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    try:
        size = max(1, -(-len(items) // (workers * _CHUNKS_PER_WORKER)))
        futures = [pool.submit(_run_chunk, list(items[start:start + size])) for start in range(0, len(items), size)]
        while not all(future.done() for future in futures):
            concurrent.futures.wait(futures, timeout=_WAIT_SECONDS)
        results = [outcome for future in futures for outcome in future.result()]
    except BaseException:
        _stop(pool)  # a time limit or a failure: the workers must not run on
        raise
    finally:
        _FUNCTION = None
    pool.shutdown(wait=True)
    return results


def worker_count(files: int) -> int:
    text = os.environ.get(WORKERS_VARIABLE, "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise ConfigError(f"{WORKERS_VARIABLE}={text!r} is not a number of workers", hint="e.g. 4, or 1 to parse in-process")
        wanted = int(text)
    else:
        wanted = min(os.cpu_count() or 1, 8)
    if wanted <= 1 or files < MIN_FILES or not _fork_is_safe():
        return 1
    return min(wanted, files // (MIN_FILES // 2))


def _fork_is_safe() -> bool:
    """A forked child holds only the forking thread: another thread's lock it held at the fork stays held for good.
    The load time limit's watchdog only waits on an event, which the child never touches."""
    if not hasattr(os, "fork"):
        return False
    current = threading.current_thread()
    return all(thread is current or thread.name == "sparkmesh-load-limit" for thread in threading.enumerate())


def _run_chunk(items: list) -> list[object]:
    assert _FUNCTION is not None  # inherited from the parent at the fork
    return [_outcome(_FUNCTION, item) for item in items]


def _outcome(function: Callable[[T], object], item: T) -> object:
    try:
        return function(item)
    except SparkMeshError as error:
        return error
    except (SystemExit, ExitCalled) as error:  # project code in a worker must not end the load silently either
        return exit_error(error, "project code")


def _stop(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    processes = list(getattr(pool, "_processes", {}).values())  # no public way to reach a busy worker
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.kill()
    for process in processes:
        process.join(timeout=5)
