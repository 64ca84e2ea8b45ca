"""Which Spark failures are transient and which are Spark's refusal of a statement, read from the exceptions.

The one place that reads Spark's exception classes and messages to judge them; ``failures.spark_errors`` sets the
verdict on the ``EngineError`` it raises, so callers ask the error (``EngineError.transient``, ``.refusal``).
Transient: the Spark Connect session or channel was lost (server restarted, network blip) or the metastore could
not get a lock in time (Derby, a busy Hive metastore). Works on class names and messages along the exception
chain, so it imports no pyspark: the executor may ask it about errors its user's Python models raised.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_TRANSIENT = re.compile(
    r"INVALID_HANDLE\.SESSION_(?:NOT_FOUND|CLOSED|CHANGED)|StatusCode\.UNAVAILABLE|failed to connect to all addresses"
    r"|Connection reset|Socket closed|Broken pipe|GOAWAY|RST_STREAM"
    r"|Lock wait timeout|could not be obtained within the time requested|ERROR 40XL1|LockTimeout"
    r"|deadlock detected|Read timed out",
    re.IGNORECASE,
)
# Spark judged the statement (or the user's code) itself: the same work fails the same way next time.
_PERMANENT_CLASSES = frozenset({"AnalysisException", "ParseException", "IllegalArgumentException", "PythonException"})
# Spark could not analyze or parse the statement: the statement's fault, which the user can fix.
_REFUSAL_CLASSES = frozenset({"AnalysisException", "ParseException"})


def is_transient(error: BaseException) -> bool:
    """Whether repeating the work may succeed: a lost session or a lock timeout, and nothing Spark refused."""
    chain = list(exception_chain(error))
    if any(type(e).__name__ in _PERMANENT_CLASSES for e in chain):
        return False
    return any(_TRANSIENT.search(f"{type(e).__name__}: {e}") for e in chain)


def is_refusal(error: BaseException) -> bool:
    """Whether Spark refused the statement on its merits (analysis or parsing), as opposed to failing to run it."""
    return type(error).__name__ in _REFUSAL_CLASSES


def exception_chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and its causes (or contexts), each once."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
