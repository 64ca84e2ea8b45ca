"""A time limit on loading a project: a macro or ``config.py`` that loops forever must not hang ``plan``, ``info``,
a Dagster code location or the git sensor forever.

Loading runs the project's Python (macros, ``config.py``, Python models, signals). A watchdog thread waits for the
limit (``SPARKMESH_LOAD_TIMEOUT`` seconds, default 300) and then raises ``LoadTimeout`` inside the loading thread
(``PyThreadState_SetAsyncExc``: Python checks for it between bytecodes, so a ``while True`` loop is interrupted;
code blocked inside a C call is interrupted when it returns). The error names the project file and line that was
running. Any thread can load (the git sensor's tick is not the main thread), hence no ``signal.alarm``.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dagster_sparkmesh.errors import ConfigError, ProjectError
from dagster_sparkmesh.user_exit import user_frame

DEFAULT_SECONDS = 300.0
ENVIRONMENT_VARIABLE = "SPARKMESH_LOAD_TIMEOUT"


class LoadTimeout(BaseException):
    """Raised asynchronously in the loading thread once the limit has passed; not an ``Exception``, so that the
    project's own ``except Exception: pass`` cannot swallow it. ``load_time_limit`` turns it into a ProjectError."""


def load_seconds() -> float:
    text = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        raise ConfigError(f"{ENVIRONMENT_VARIABLE}={text!r} is not a number of seconds", hint="e.g. 600") from None
    if seconds <= 0:
        raise ConfigError(f"{ENVIRONMENT_VARIABLE}={text!r} must be more than 0 seconds", hint="e.g. 600")
    return seconds


@contextmanager
def load_time_limit(root: Path, seconds: float | None = None) -> Iterator[None]:
    """Inside: loading ``root`` stops with a clear error after ``seconds`` (default: ``load_seconds()``)."""
    limit = load_seconds() if seconds is None else seconds
    loader = threading.get_ident()
    finished = threading.Event()
    lock = threading.Lock()
    posted: list[bool] = []  # the watchdog posted a LoadTimeout: one may still be pending after the load

    def interrupt() -> None:
        wait = limit
        while not finished.wait(wait):  # again each second: user code may swallow it (``except Exception: pass``)
            with lock:
                if not finished.is_set():
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(loader), ctypes.py_object(LoadTimeout))
                    posted.append(True)
            wait = 1.0

    watchdog = threading.Thread(target=interrupt, name="sparkmesh-load-limit", daemon=True)
    watchdog.start()
    try:
        yield
    except LoadTimeout as timeout:
        raise _timeout_error(timeout, root, limit) from None
    finally:
        try:
            with lock:
                finished.set()
        except LoadTimeout:  # posted just as the load ended: the load succeeded
            finished.set()
        if posted:
            _absorb_pending_timeout()


def _absorb_pending_timeout() -> None:
    """Take delivery of a ``LoadTimeout`` posted after the load ended (or of none).

    It is received, not voided: voiding it (``PyThreadState_SetAsyncExc(id, NULL)``) leaves CPython's flag for a
    pending asynchronous exception raised for the whole interpreter, which then checks for one at every call and
    loop for the rest of the process, and on Python 3.11 loops forever at the next call once a profiler or tracer
    (coverage, a debugger, cProfile) is installed. Python checks for it at each backward jump of this loop."""
    try:
        for _ in range(1000):
            continue  # nothing to do: each backward jump is where a pending exception is delivered
    except LoadTimeout:
        return  # received, so no longer pending: the load it was meant for had already succeeded


def _timeout_error(timeout: LoadTimeout, root: Path, limit: float) -> ProjectError:
    frame = user_frame(timeout, root)
    where = f" while running {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return ProjectError(
        f"loading the project took more than {limit:g} s{where} (an endless loop?)",
        path=Path(frame.filename) if frame else root,
        line=frame.lineno if frame else None,
        snippet=frame.line if frame else None,
        hint=f"fix the code on that line; if the project needs longer to load, set {ENVIRONMENT_VARIABLE} (seconds)",
    )
