"""Retry transient failures with exponential backoff, a bounded number of times; never retry a user's mistake.

Transient: the Spark Connect session or channel was lost (server restarted, network blip) or the metastore could
not get a lock in time (Derby, a busy Hive metastore). Permanent: anything Spark refused on its merits (a SQL,
analysis or parse error), an audit failure, or any error we do not recognise: retrying those only delays the
message. Writes are safe to repeat because every writer is idempotent for its intervals (DESIGN invariant 3) and
records intervals only after the data (invariant 4).

Classification works on class names and messages along the exception chain (``EngineError`` wraps Spark's
exception as its cause), so this module does not import pyspark.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from dagster_sparkmesh.errors import AuditFailure, ProjectError, UnitTestFailure

T = TypeVar("T")

_TRANSIENT = re.compile(
    r"INVALID_HANDLE\.SESSION_(?:NOT_FOUND|CLOSED|CHANGED)|StatusCode\.UNAVAILABLE|failed to connect to all addresses"
    r"|Connection reset|Socket closed|Broken pipe|GOAWAY|RST_STREAM"
    r"|Lock wait timeout|could not be obtained within the time requested|ERROR 40XL1|LockTimeout"
    r"|deadlock detected|Read timed out",
    re.IGNORECASE,
)
# Spark judged the statement itself: the same statement fails the same way next time.
_PERMANENT_CLASSES = frozenset({"AnalysisException", "ParseException", "IllegalArgumentException", "PythonException"})
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
    chain = list(_chain(error))
    if any(isinstance(e, _PERMANENT_ERRORS) or type(e).__name__ in _PERMANENT_CLASSES for e in chain):
        return False
    return any(_TRANSIENT.search(f"{type(e).__name__}: {e}") for e in chain)


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


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
