"""User code may not end the process.

A macro, ``config.py``, a signal or a Python model that calls ``sys.exit(3)`` or ``os._exit(0)`` would end
``plan`` with that code and no message, ``0`` included: a CI job or a Dagster code location would think all is
well, and a run would leave its plan-log row without an outcome and its table lock held. While project code runs,
``os._exit`` raises instead (``exits_refused``), and either call becomes an ``ProjectError`` naming the file and
line (``exit_error``): exit code 2, and whatever was under way fails as after any other error.
"""

from __future__ import annotations

import os
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dagster_sparkmesh.errors import ProjectError, SparkMeshError

_PACKAGE_ROOT = Path(__file__).resolve().parent
_lock = threading.Lock()
_depth = 0
_original_exit = os._exit


class ExitCalled(BaseException):
    """``os._exit(code)`` called by project code (a BaseException: the user's ``except Exception`` lets it pass)."""

    def __init__(self, code: object) -> None:
        super().__init__(code)
        self.code = code


def _refuse(code: int) -> None:
    raise ExitCalled(code)


@contextmanager
def exits_refused() -> Iterator[None]:
    """While inside (re-entrant, across threads): ``os._exit`` raises ``ExitCalled``."""
    global _depth
    with _lock:
        _depth += 1
        os._exit = _refuse
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                os._exit = _original_exit


def exit_error(
    error: SystemExit | ExitCalled, what: str, root: Path | None = None, kind: type[SparkMeshError] = ProjectError
) -> SparkMeshError:
    """The error (a ``kind``) for project code that tried to end the process: its file and line, read from the
    traceback."""
    call = "os._exit" if isinstance(error, ExitCalled) else "sys.exit"
    frame = user_frame(error, root)
    return kind(
        f"{what} called {call}({error.code!r}): project code must not end the process",
        path=Path(frame.filename) if frame else None,
        line=frame.lineno if frame else None,
        snippet=frame.line if frame else None,
        hint="raise an exception with a message instead; the command stops with that message (exit code 2)",
    )


def user_frame(error: BaseException, root: Path | None) -> traceback.FrameSummary | None:
    """The innermost frame in the project's files (under ``root``), else outside this package and libraries."""
    frames = traceback.extract_tb(error.__traceback__)
    for frame in reversed(frames):
        path = Path(frame.filename).resolve()
        if root is not None and path.is_relative_to(root.resolve()):
            return frame
        if root is None and not path.is_relative_to(_PACKAGE_ROOT) and "site-packages" not in path.parts:
            return frame
    return None
