"""Stopping an apply on request: between models and between interval batches, never in the middle of a write.

An interrupt (Ctrl-C in the CLI, a run terminated from the Dagster UI) arrives as an exception in the main thread
at an arbitrary point. Raised there, it would abandon the models in flight halfway between their data and their
interval records. So the work runs in a helper thread and the main thread only waits: the first interrupt sets a
stop flag that the scheduler and the writers check at their safe points; the work then ends with
``StopRequested``, every completed interval recorded, and the caller records the application as aborted. A
second interrupt is re-raised at once for a user who really wants out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.results import ModelRunResult

T = TypeVar("T")

ABORTED_EXIT_CODE = 130
"""What a shell reports for a command ended by SIGINT (128 + 2)."""


class StopFlag:
    """A thread-safe 'please stop' that works as the ``should_stop`` callable of the scheduler and the writers."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def request(self) -> None:
        self._event.set()

    def __call__(self) -> bool:
        return self._event.is_set()


class StopRequested(ExecutionError):
    """Raised by a writer at a batch boundary once a stop was requested (its completed batches are recorded)."""

    def __init__(self, model: str) -> None:
        super().__init__(f"{model}: stopped on request between interval batches")
        self.model = model


class ApplyAborted(ExecutionError):
    """The work stopped on request: ``results`` completed and are recorded, ``not_finished`` were stopped or never
    started. Nothing was promoted; running the same command again resumes."""

    exit_code = ABORTED_EXIT_CODE

    def __init__(self, results: Sequence[ModelRunResult], not_finished: Sequence[str]) -> None:
        self.results = list(results)
        self.not_finished = sorted(not_finished)
        super().__init__(
            f"aborted: {len(self.results)} model(s) completed, {len(self.not_finished)} not finished",
            snippet=", ".join(self.not_finished) or None,
            hint="completed intervals are kept and the environment is unchanged; run the same command to resume",
        )


def run_until_stopped(
    work: Callable[[StopFlag], T],
    *,
    interrupts: tuple[type[BaseException], ...] = (KeyboardInterrupt,),
    on_stop: Callable[[], None] = lambda: None,
) -> T:
    """Run ``work(flag)`` in a helper thread; the first of ``interrupts`` caught here requests a stop.

    Must be called from the thread that receives the interrupts (the main thread for signals).
    """
    flag = StopFlag()
    outcome: dict[str, object] = {}
    # Waiting on an event, not Thread.join: an exception interrupting join() marks the thread as stopped.
    finished = threading.Event()

    def target() -> None:
        try:
            outcome["value"] = work(flag)
        except BaseException as error:  # noqa: BLE001 - handed back to the calling thread below
            outcome["error"] = error
        finally:
            finished.set()

    # Daemon: after a second interrupt the process may exit without waiting for a Spark job to finish.
    worker = threading.Thread(target=target, name="sparkmesh-apply", daemon=True)
    worker.start()
    while not finished.is_set():
        try:
            finished.wait(0.2)
        except interrupts:
            if flag():
                raise
            flag.request()
            on_stop()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
