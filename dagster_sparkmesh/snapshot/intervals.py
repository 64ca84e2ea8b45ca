"""Pure arithmetic on half-open ``[start, end)`` intervals: merge, remove a range, find what is not covered.

The one interval algebra of the package, below both the state store (which appends interval rows, so concurrent
writers never overwrite each other, and merges on read) and the planner. Cron-aligned units are in
``plan/intervals.py``.
"""

from __future__ import annotations

from collections.abc import Iterable

from dagster_sparkmesh.clock import to_naive_utc
from dagster_sparkmesh.snapshot.records import Interval


def normalize(interval: Interval) -> Interval:
    """Naive UTC bounds, so intervals written with and without a timezone compare."""
    return Interval(start=to_naive_utc(interval.start), end=to_naive_utc(interval.end))


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, with overlapping and touching intervals joined; empty intervals dropped."""
    merged: list[Interval] = []
    for interval in sorted(i for i in intervals if i.start < i.end):
        if merged and interval.start <= merged[-1].end:
            last = merged[-1]
            if interval.end > last.end:
                merged[-1] = Interval(start=last.start, end=interval.end)
        else:
            merged.append(interval)
    return merged


def without(intervals: Iterable[Interval], held: Iterable[Interval]) -> list[Interval]:
    """The time of ``intervals`` that ``held`` does not hold, merged (a partial interval done again whole leaves
    only its new part)."""
    remaining = merge(intervals)
    for interval in merge(held):
        remaining = remove_range(remaining, interval)
    return remaining


def remove_range(intervals: Iterable[Interval], removed: Interval) -> list[Interval]:
    """``intervals`` minus ``removed``, merged; an interval straddling ``removed`` is split in two."""
    remaining: list[Interval] = []
    for interval in merge(intervals):
        if interval.end <= removed.start or interval.start >= removed.end:
            remaining.append(interval)
            continue
        if interval.start < removed.start:
            remaining.append(Interval(start=interval.start, end=removed.start))
        if interval.end > removed.end:
            remaining.append(Interval(start=removed.end, end=interval.end))
    return remaining


def covers(merged: list[Interval], interval: Interval) -> bool:
    """Whether one of the (merged) intervals contains ``interval`` entirely."""
    return any(m.start <= interval.start and interval.end <= m.end for m in merged)


def uncovered(recorded: Iterable[Interval], expected: Iterable[Interval]) -> list[Interval]:
    """The expected intervals that the recorded ones do not entirely cover, in the order given (a partly covered
    one is missing)."""
    merged = merge(recorded)
    return [interval for interval in expected if not covers(merged, interval)]
