"""Segments of a period table (``engine.period_tables``): which immutable pieces of a period a write replaces.

A period table's rows are stored in *segments*: each a partition of the data table holding the rows of one
half-open time range inside one period (a month, or a day for sub-daily models), written once and never changed.
The partition value names the range and a version, ``20240101T000000_20240201T000000_1732670000123a1b2c3``; the
physical view lists the segments that are current (``WHERE sparkmesh_month IN (...)``), and current segments never
overlap. An interval write adds new segments and switches the view to them in one ``ALTER VIEW``:

- a reader that resolved the view before the switch goes on reading the segments it found, whose files stay
  in place (a rewrite in place would make such a reader fail on a missing file, or, between the delete and the
  rename of a dynamic overwrite, silently read an empty month);
- a daily write into a month that already holds other days adds a one-day segment instead of rewriting the month;
  only segments that overlap the interval are rewritten (their rows outside it kept), and a period holding more than
  ``MAX_SEGMENTS_PER_PERIOD`` segments is merged into one by the write that would add the next;
- a retired segment is dropped by a later write once ``RETIRED_SEGMENT_GRACE`` has passed since the write that
  retired it began (a reader may still list it that long after); a segment no view ever named (a crashed write's)
  is dropped as soon as a later write finds it;
- the view names every current segment, and the metastore keeps a view's text in at most 32,700 characters
  (Derby's LONG VARCHAR, about 560 names): a table of day periods (a sub-daily model's) whose view would name more
  than ``SEAL_ABOVE`` segments has its older months *sealed* by the write, each month's segments merged into one
  segment of the whole month. A later write into a sealed month rewrites that month, as a table of month periods
  would.

This module is pure: it plans, the engine runs the statements.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from dagster_sparkmesh.clock import utc_now
from dagster_sparkmesh.engine.partition_sql import string_literal
from dagster_sparkmesh.snapshot.naming import quote, quote_identifier

MAX_SEGMENTS_PER_PERIOD = 8
"""A month of daily runs would otherwise read 30 folders; merging at 9 keeps a daily write's amortized cost at about
one extra day rewritten (a month's rows rewritten once every eight days)."""
SEAL_ABOVE = 120
"""Two years of days would name 730 segments. Sealed above 120, a table of daily segments seals its months but the
newest about every four months, each month once (its rows written once more, whenever it is sealed), and its view
names at most 120 segments plus the newest month's (at most 8 a day): 368 names, 21,000 characters."""
RETIRED_SEGMENT_GRACE = timedelta(minutes=15)
_STAMP = "%Y%m%dT%H%M%S"
_EPOCH = datetime(1970, 1, 1)
_IN_LIST = re.compile(r"\bIN\s*\((?P<values>[^)]*)\)\s*$", re.IGNORECASE)
_NOTHING = re.compile(r"\bWHERE\s+FALSE\s*$", re.IGNORECASE)


@dataclass(frozen=True, order=True)
class Segment:
    """The rows of ``[start, end)`` inside one period, written by the write whose version is ``version``."""

    start: datetime
    end: datetime
    version: str = ""
    """Epoch milliseconds (13 digits) and a random suffix; empty for a whole-period partition of the first layout."""

    @property
    def value(self) -> str:
        if not self.version:
            return self.start.date().isoformat()
        return f"{self.start.strftime(_STAMP)}_{self.end.strftime(_STAMP)}_{self.version}"

    @property
    def written_at_ms(self) -> int:
        return version_written_at_ms(self.version)

    def overlaps(self, start: datetime, end: datetime) -> bool:
        return self.start < end and start < self.end


def parse_segment(value: str, period: str) -> Segment:
    """The segment a partition value names; a bare ``yyyy-MM-dd`` is a whole period (the first layout's value)."""
    if "_" not in value:
        start = datetime.combine(date.fromisoformat(value), datetime.min.time())
        return Segment(start, datetime.combine(next_period(start.date(), period), datetime.min.time()))
    start, end, version = value.split("_", 2)
    return Segment(datetime.strptime(start, _STAMP), datetime.strptime(end, _STAMP), version)


def new_version() -> str:
    return f"{wall_clock_ms():013d}{uuid.uuid4().hex[:9]}"


def version_written_at_ms(version: str) -> int:
    """When the write that made ``version`` (``new_version``) began; 0 for the first layout's unversioned values."""
    return int(version[:13]) if version else 0


def wall_clock_ms() -> int:
    """Milliseconds since the epoch, from the wall clock: versions and the grace measure the time readers live in,
    not a run's execution time."""
    return int((utc_now() - _EPOCH).total_seconds() * 1000)


def next_period(start: date, period: str) -> date:
    if period == "day":
        return start + timedelta(days=1)
    return date(start.year + start.month // 12, start.month % 12 + 1, 1)


def periods_touched(start: datetime, end: datetime, period: str) -> list[date]:
    """The first days of the periods that overlap ``[start, end)``, in order (at least one)."""
    periods = [period_start(start, period)]
    while True:
        following = next_period(periods[-1], period)
        if datetime.combine(following, datetime.min.time()) >= end:
            return periods
        periods.append(following)


@dataclass(frozen=True)
class SegmentWrite:
    """What one interval write does: the segments it reads back (rows outside the interval) and retires, the
    segments it writes (one per period touched), and the view's segments after it."""

    replaced: tuple[Segment, ...]
    written: tuple[Segment, ...]
    current_after: tuple[Segment, ...]


def plan_segment_write(
    current: Sequence[Segment], start: datetime, end: datetime, period: str, version: str,
    max_per_period: int = MAX_SEGMENTS_PER_PERIOD, seal_above: int | None = None,
) -> SegmentWrite:
    replaced: list[Segment] = []
    written: list[Segment] = []
    for first_day in periods_touched(start, end, period):
        period_start = _midnight(first_day)
        period_end = _midnight(next_period(first_day, period))
        lower, upper = max(start, period_start), min(end, period_end)
        in_period = [s for s in current if s.overlaps(period_start, period_end)]
        overlapping = [s for s in in_period if s.overlaps(lower, upper)]
        if len(in_period) - len(overlapping) + 1 > max_per_period:
            overlapping = in_period  # merge the period's segments into the one written now
        replaced += [s for s in overlapping if s not in replaced]  # a sealed month overlaps each of its days
        # The union of segments that each overlap [lower, upper) and that interval is one range without gaps.
        written.append(Segment(
            min([lower, *(s.start for s in overlapping)]), max([upper, *(s.end for s in overlapping)]), version
        ))
    kept = [s for s in current if s not in replaced]
    joined = _joined(written)
    plan = SegmentWrite(tuple(replaced), joined, tuple(sorted([*kept, *joined])))
    return _sealed(plan, version, SEAL_ABOVE if seal_above is None else seal_above) if period == "day" else plan


def _joined(written: list[Segment]) -> tuple[Segment, ...]:
    """The written ranges with overlapping ones made one (the days of a sealed month each extend to the month)."""
    joined: list[Segment] = []
    for segment in sorted(written):
        if joined and segment.start < joined[-1].end:
            last = joined.pop()
            segment = Segment(last.start, max(last.end, segment.end), segment.version)
        joined.append(segment)
    return tuple(joined)


def _sealed(plan: SegmentWrite, version: str, seal_above: int) -> SegmentWrite:
    """``plan`` with its oldest months sealed while the view would name more than ``seal_above`` segments; the
    newest month keeps its days, where the next writes go."""
    current, replaced, written = list(plan.current_after), list(plan.replaced), list(plan.written)
    months = sorted({s.start.date().replace(day=1) for s in current})
    for month in months[:-1]:
        if len(current) <= seal_above:
            break
        inside = [s for s in current if s.start.date().replace(day=1) == month]
        if len(inside) < 2:
            continue
        whole = Segment(_midnight(month), _midnight(next_period(month, "month")), version)
        replaced += [s for s in inside if s not in written]  # kept segments: their rows are read back
        written = [s for s in written if s not in inside] + [whole]
        current = [s for s in current if s not in inside] + [whole]
    return SegmentWrite(tuple(replaced), tuple(sorted(written)), tuple(sorted(current)))


def _midnight(day: date) -> datetime:
    return datetime.combine(day, datetime.min.time())


def droppable_segments(
    listed: Iterable[Segment], current: Sequence[Segment], now_ms: int, grace: timedelta = RETIRED_SEGMENT_GRACE,
) -> list[Segment]:
    """Partitions that are no current segment and that no reader can still be reading.

    A segment is retired by the write of the newest current segment overlapping it, which began at that segment's
    version time; a segment no current one overlaps, or only older ones, was never named by a view (a crashed
    write's), so nobody reads it."""
    grace_ms = int(grace.total_seconds() * 1000)
    names = {s.value for s in current}
    droppable = []
    for segment in listed:
        if segment.value in names:
            continue
        successors = [s.written_at_ms for s in current if s.overlaps(segment.start, segment.end)]
        retired_at = max(successors, default=0)
        if retired_at <= segment.written_at_ms or now_ms - retired_at >= grace_ms:
            droppable.append(segment)
    return sorted(droppable)


def segment_of_rows(column: str, period: str, written: Sequence[Segment]) -> str:
    """SQL mapping a row's time column to the segment written for its period (every row is in a touched period;
    a sealed month's segment holds the rows of each of its days)."""
    as_date = f"CAST({quote_identifier(column)} AS DATE)"
    key = f"CAST(TRUNC({as_date}, 'MM') AS STRING)" if period == "month" else f"CAST({as_date} AS STRING)"
    cases = " ".join(f"WHEN {_periods_of(key, segment, period)} THEN {string_literal(segment.value)}" for segment in written)
    # A row outside every touched period would land in no segment: fail the write rather than file it under NULL.
    return f"CASE {cases} ELSE RAISE_ERROR('sparkmesh: a row outside the periods of its interval') END"


def _periods_of(key: str, segment: Segment, period: str) -> str:
    """The test of a row's period ``key`` (an ISO date, which orders as text) for the periods ``segment`` spans."""
    first = period_start(segment.start, period)
    if _midnight(next_period(first, period)) >= segment.end:
        return f"{key} = {string_literal(first.isoformat())}"
    return f"{key} >= {string_literal(first.isoformat())} AND {key} < {string_literal(segment.end.date().isoformat())}"


def period_start(moment: datetime, period: str) -> date:
    return moment.date().replace(day=1) if period == "month" else moment.date()


def segment_list(segments: Iterable[Segment]) -> str:
    return ", ".join(string_literal(s.value) for s in segments)


def view_sql(data_table: str, columns: str, period_column: str, current: Sequence[Segment]) -> str:
    """The physical view: the model's columns of the current segments."""
    where = f"{quote_identifier(period_column)} IN ({segment_list(current)})" if current else "FALSE"
    return f"SELECT {columns} FROM {quote(data_table)} WHERE {where}"


def current_values(view_text: str) -> list[str] | None:
    """The segment values a physical view's text names; None for a view of the whole data table (the first
    layout's, where every partition is current)."""
    text = view_text.strip()
    if _NOTHING.search(text):
        return []
    match = _IN_LIST.search(text)
    if match is None:
        return None
    return re.findall(r"'([^']*)'", match.group("values"))
