"""Crash points: named places in an apply where a test can kill the process (SIGKILL, no clean-up at all).

Armed by ``SPARKMESH_CRASH_AT=<stage>:<n>``: the n-th time (1-based) the process reaches ``crashpoint(stage)``
it dies. With ``SPARKMESH_CRASH_DELAY=<seconds>`` it dies that long *after* reaching the point instead, while
the step that follows (an interval write, a view swap) is under way. Unarmed, a crash point costs one dict
lookup: the reliability suite proves that every stage can be killed and resumed without losing data.
"""

from __future__ import annotations

import os
import signal
import threading

ENV_VAR = "SPARKMESH_CRASH_AT"
DELAY_VAR = "SPARKMESH_CRASH_DELAY"

STAGES = (
    "push_snapshots",  # the plan prepared (snapshots stored, restatements applied), no data written
    "interval_write",  # before each batch write of an incremental model (with a delay: during it)
    "before_record_interval",  # batch data committed and audited, interval not yet recorded
    "view_swap",  # before each view is created/altered/dropped (with a delay: during it)
    "environment_swap",  # every view swapped, environment record not yet swapped
    "after_environment_swap",  # environment record swapped, plan not yet marked finished
)

_lock = threading.Lock()
_reached: dict[str, int] = {}


def crashpoint(stage: str) -> None:
    armed = os.environ.get(ENV_VAR)
    if not armed:
        return
    target, _, count = armed.partition(":")
    if target != stage:
        return
    with _lock:
        _reached[stage] = _reached.get(stage, 0) + 1
        hit = _reached[stage] == int(count or 1)
    if hit:
        _die_after(float(os.environ.get(DELAY_VAR) or 0))


def _die_after(delay: float) -> None:
    if delay <= 0:
        os.kill(os.getpid(), signal.SIGKILL)
    timer = threading.Timer(delay, os.kill, args=(os.getpid(), signal.SIGKILL))
    timer.daemon = True
    timer.start()
