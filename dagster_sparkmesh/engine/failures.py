"""Turn Spark's exceptions into EngineError: the statement that failed and Spark's message, without a JVM stack.

Spark raises different classes in-process (py4j, ``CapturedException``) and over Spark Connect
(``SparkConnectGrpcException``); callers above the engine only ever see ``EngineError``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException

from dagster_sparkmesh.engine.failure_kinds import is_refusal, is_transient
from dagster_sparkmesh.errors import EngineError

_MESSAGE_LINES = 6
_STATEMENT_CHARS = 600
# Lines from which on Spark's message is stack trace or server-side noise, not something a user can act on.
_NOISE_MARKERS = ("\tat ", "JVM stacktrace:", "== SQL", "Traceback (most recent call last)")


def spark_message(error: BaseException) -> str:
    """The first meaningful lines of a Spark error message."""
    kept = []
    for line in str(error).splitlines():
        if any(line.lstrip().startswith(marker.strip()) for marker in _NOISE_MARKERS):
            break
        if line.strip():
            kept.append(line.rstrip())
        if len(kept) == _MESSAGE_LINES:
            break
    return "\n".join(kept) or type(error).__name__


def excerpt(statement: str) -> str:
    text = statement.strip()
    return text if len(text) <= _STATEMENT_CHARS else text[:_STATEMENT_CHARS] + " ..."


def error_class(error: BaseException) -> str | None:
    """Spark's error class (``TABLE_OR_VIEW_NOT_FOUND``, ``LOCATION_ALREADY_EXISTS``...) when it has one."""
    getter = getattr(error, "getCondition", None) or getattr(error, "getErrorClass", None)
    try:
        return getter() if getter else None
    except Exception:  # some wrapped errors have no condition; the text is still useful
        return None


@contextmanager
def spark_errors(statement: str, hint: str | None = None) -> Iterator[None]:
    """Run Spark work; a Spark failure becomes an EngineError quoting ``statement``."""
    try:
        yield
    except (PySparkException, Py4JError) as error:
        message = spark_message(error)
        raise EngineError(
            f"Spark refused the statement: {message}",
            snippet=excerpt(statement),
            hint=hint,
            transient=is_transient(error),
            refusal=is_refusal(error),
            spark_message=message,
        ) from error
