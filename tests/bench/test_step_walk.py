"""The step walk's second figure: which functions are handed the step's partition range (a bound, or a value
holding one: an interval, a time window, a list or mapping of them)."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.snapshot.records import Interval

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import step_walk  # noqa: E402

START, END = datetime(2024, 1, 2), datetime(2024, 1, 4)
WINDOW = frozenset({START, END})


def test_a_bound_or_a_value_holding_one_carries_the_range():
    assert step_walk._holds(START, WINDOW, depth=2)
    assert step_walk._holds(Interval(start=START, end=datetime(2024, 1, 3)), WINDOW, depth=2)
    assert step_walk._holds(TimeWindow("ds", datetime(2024, 1, 3), END), WINDOW, depth=2)
    assert step_walk._holds({"m": [Interval(start=START, end=END)]}, WINDOW, depth=2)


def test_other_days_and_plain_values_do_not():
    assert not step_walk._holds(datetime(2024, 1, 3), WINDOW, depth=2)
    assert not step_walk._holds("2024-01-02", WINDOW, depth=2)
    assert not step_walk._holds({"m": {"n": [START]}}, WINDOW, depth=2)  # deeper than the walk looks


def test_the_walk_records_a_function_handed_the_range():
    def handed(interval):
        return interval

    def not_handed(day):
        return day

    walk = step_walk.Walk((START, END))
    walk._on_event(_frame_of(handed, Interval(start=START, end=END)), "call", None)
    walk._on_event(_frame_of(not_handed, datetime(2023, 1, 1)), "call", None)
    assert [name.rsplit(".", 1)[-1] for _, name in walk.handed] == ["handed"]


def _frame_of(function, argument):
    """The frame of ``function`` called with ``argument``, as the profiler sees it, under a package path."""
    captured = {}

    def tracer(frame, event, _arg):
        if event == "call" and frame.f_code is function.__code__:
            captured["frame"] = frame

    sys.setprofile(tracer)
    try:
        function(argument)
    finally:
        sys.setprofile(None)
    frame = captured["frame"]
    return _Frame(frame, f"/x/{step_walk.PACKAGE}/walked.py")


class _Frame:
    def __init__(self, frame, path):
        self.f_locals, self._code, self._path = frame.f_locals, frame.f_code, path

    @property
    def f_code(self):
        return _Code(self._code, self._path)


class _Code:
    def __init__(self, code, path):
        self._code, self.co_filename = code, path
        self.co_qualname, self.co_varnames = code.co_qualname, code.co_varnames
        self.co_argcount, self.co_kwonlyargcount = code.co_argcount, code.co_kwonlyargcount
