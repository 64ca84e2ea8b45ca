"""Retry transient failures with exponential backoff, a bounded number of times; never retry a user's mistake.

Transient: the Spark Connect session or channel was lost (server restarted, network blip) or the metastore could
not get a lock in time (Derby, a busy Hive metastore). Permanent: anything Spark refused on its merits (a SQL,
analysis or parse error), an audit failure, or any error we do not recognise: retrying those only delays the
message. Writes are safe to repeat because every writer is idempotent for its intervals (architecture invariant 3) and
records intervals only after the data (invariant 4).

Which failures are transient is judged in ``engine/`` (``engine.failure_kinds``), the one place that reads Spark's
messages: an ``EngineError`` carries the verdict; an error from a user's Python model (no ``EngineError`` in its
chain) is judged there too. This module adds only the package's own permanent errors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from dagster_sparkmesh.engine import failure_kinds
from dagster_sparkmesh.errors import AuditFailure, EngineError, ProjectError, UnitTestFailure

T = TypeVar("T")

_PERMANENT_ERRORS = (ProjectError, AuditFailure, UnitTestFailure)


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3
    """Total tries, the first included; 1 disables retrying."""
    delay_seconds: float = 2.0
    backoff: float = 2.0
    max_delay_seconds: float = 30.0

    def delays(self) -> Iterator[float]:
        delay = self.delay_seconds
        for _ in range(self.attempts - 1):
            yield min(delay, self.max_delay_seconds)
            delay *= self.backoff


DEFAULT_POLICY = RetryPolicy()
NO_RETRY = RetryPolicy(attempts=1)


def is_transient(error: BaseException) -> bool:
    chain = list(failure_kinds.exception_chain(error))
    if any(isinstance(e, _PERMANENT_ERRORS) for e in chain):
        return False
    judged = [e for e in chain if isinstance(e, EngineError)]
    return any(e.transient for e in judged) if judged else failure_kinds.is_transient(error)


def with_retries(
    action: Callable[[], T],
    policy: RetryPolicy = DEFAULT_POLICY,
    *,
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[BaseException, int, float], None] | None = None,
) -> T:
    """``action()``; a transient failure is retried after each of ``policy.delays()``, then re-raised."""
    delays = policy.delays()
    attempt = 1
    while True:
        try:
            return action()
        except Exception as error:
            delay = next(delays, None) if is_transient(error) else None
            if delay is None:
                raise
            if on_retry is not None:
                on_retry(error, attempt, delay)
            sleep(delay)
            attempt += 1
