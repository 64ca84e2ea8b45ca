"""What a model's inputs lacked: an interval is complete only if the data it was computed from was complete for it.

A model reads its parents' physical tables. Where a parent misses an interval inside its own lifetime (its start
to its end), whatever a child computes over that time is computed from incomplete data, so the child must not
record it complete: the interval stays missing and is computed again once the parent has it (architecture invariant 4,
extended to inputs). Outside a parent's lifetime there is nothing to wait for.

- External models are complete by definition (the project does not build them).
- A seed is complete once loaded: its rows do not depend on time.
- An embedded model is inlined into its readers, so its own parents are what they read.
- Any other parent is complete where its recorded intervals (of the version the reader uses) say so.

The same test guards promotion: an environment is promoted only if, within the plan's window, no model holds an
interval that one of its parents lacks (``lacking_inputs``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.dates import parse_datetime
from dagster_sparkmesh.plan.intervals import Schedule, interval_cron
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.intervals import merge, remove_range
from dagster_sparkmesh.snapshot.records import Interval

_EVERYTHING = Interval(start=datetime.min, end=datetime.max)


class IntervalReader(Protocol):
    def get_intervals(self, name: str, version: str) -> list[Interval]: ...


@dataclass(frozen=True)
class InputGap:
    """A parent's missing time that a model's interval would have read."""

    parent: str
    interval: Interval

    def describe(self) -> str:
        return f"{self.parent} lacks [{_text(self.interval.start)}, {_text(self.interval.end)})"


def _text(moment: datetime) -> str:
    if moment in (datetime.min, datetime.max):
        return "..."
    return f"{moment:%Y-%m-%d}" if moment.time() == datetime.min.time() else f"{moment:%Y-%m-%d %H:%M}"


def model_bounds(project: Project, model: Model, now: datetime) -> tuple[datetime | None, datetime | None]:
    """The model's own start (or the project default) and its ``end`` as an exclusive bound (None: unbounded).

    A plain date as ``end`` means that whole day is included."""
    text = model.start or project.config.model_defaults.start
    start = parse_datetime(text, now=now) if text else None
    end = parse_datetime(model.end, now=now) if model.end else None
    if end is not None and len(model.end.strip()) == 10:
        end += timedelta(days=1)
    return start, end


def input_gaps(
    project: Project,
    name: str,
    version_of: Callable[[str], str | None],
    state: IntervalReader,
    now: datetime,
) -> list[InputGap]:
    """The time each parent of ``name`` lacks, for the parents' versions ``version_of`` gives."""
    gaps: list[InputGap] = []
    for parent in sorted(project.tables_read_by(name)):
        model = project.models.get(parent)
        if model is None or not model.kind.has_physical_layer:
            continue
        version = version_of(parent)
        recorded = state.get_intervals(parent, version) if version else []
        gaps += [InputGap(parent, gap) for gap in _lacking(project, model, recorded, now)]
    return gaps


def _lacking(project: Project, model: Model, recorded: list[Interval], now: datetime) -> list[Interval]:
    if model.kind.from_seed_file:
        return [] if recorded else [_EVERYTHING]
    start, end = model_bounds(project, model, now)
    if start is None:  # no declared start: the model's data begins where it was first computed
        start = min((i.start for i in recorded), default=datetime.min)
    lifetime = Interval(start=start, end=end or datetime.max)
    if lifetime.start >= lifetime.end:
        return []
    gaps = [lifetime]
    for interval in merge(recorded):
        gaps = [piece for gap in gaps for piece in remove_range([gap], interval)]
    return gaps


def complete_part(
    intervals: Iterable[Interval], gaps: Iterable[InputGap], lookback: tuple[str, int] | None = None
) -> tuple[list[Interval], list[Interval]]:
    """``intervals`` split into those no gap touches (complete) and the others (computed from incomplete data).

    ``lookback``: (cron, N) of a model whose interval reads its parents' N intervals before it as well."""
    holes = merge(gap.interval for gap in gaps)
    complete: list[Interval] = []
    incomplete: list[Interval] = []
    for interval in intervals:
        read = _with_lookback(interval, lookback) if lookback else interval
        touched = any(h.start < read.end and read.start < h.end for h in holes)
        (incomplete if touched else complete).append(interval)
    return complete, incomplete


def _with_lookback(interval: Interval, lookback: tuple[str, int]) -> Interval:
    cron, count = lookback
    schedule = Schedule.of(cron)
    start = interval.start
    for _ in range(count):
        start = schedule.previous(start)
    return Interval(start=start, end=interval.end)


def lookback_of(model: Model) -> tuple[str, int] | None:
    count = getattr(model.kind, "lookback", 0) or 0
    return (interval_cron(model), count) if count else None


def lacking_inputs(
    project: Project,
    versions: Mapping[str, str],
    window: Interval,
    state: IntervalReader,
    now: datetime,
) -> dict[str, list[InputGap]]:
    """Model → the gaps of its parents under the intervals it holds within ``window``; only models with some.

    ``versions``: the environment's version of every model. Promotion refuses when this is not empty."""
    found: dict[str, list[InputGap]] = {}
    for name, version in versions.items():
        model = project.models.get(name)
        if model is None or not model.kind.has_physical_layer:
            continue
        held = [i for i in state.get_intervals(name, version) if i.start < window.end and window.start < i.end]
        if not held:
            continue
        gaps = input_gaps(project, name, versions.get, state, now)
        clipped = [_clip(gap, window) for gap in gaps]
        touching = [gap for gap in clipped if gap and _touches(gap.interval, held)]
        if touching:
            found[name] = touching
    return found


def _clip(gap: InputGap, window: Interval) -> InputGap | None:
    start, end = max(gap.interval.start, window.start), min(gap.interval.end, window.end)
    return InputGap(gap.parent, Interval(start=start, end=end)) if start < end else None


def _touches(interval: Interval, held: list[Interval]) -> bool:
    return any(h.start < interval.end and interval.start < h.end for h in held)
