"""Which recorded intervals a plan removes (to compute them again), model by model, down the DAG. Pure.

A restatement starts at the models the user names (``--restate-model``: their window in the plan) or at the
forward-only models of a prod plan with ``--effective-from`` (from that moment on). Every model that reads a
restated model is restated too, over what it read of it:

- a model with ``lookback N`` reads N intervals back, so its next N intervals after the restated range read
  restated data: its range is the parent's, extended N units forward;
- kinds that cannot rewrite a time range (FULL, VIEW, SEED, unique-key, SCD type 2, by-partition, unmanaged) are
  restated whole, from their first recorded interval to their last, so they are rebuilt as a fresh build would
  build them (unmanaged and SCD type 2 ones only if their kind clears ``disable_restatement``, which SQLMesh sets
  for them: a history's past versions could not be computed again).

Ranges never reach past what a model has recorded or the plan's window: restating never computes new time.
In a development environment a table shared with prod is never restated (architecture invariant 6): a note says so.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.plan.intervals import Schedule, expected_intervals, interval_cron
from dagster_sparkmesh.snapshot.intervals import merge
from dagster_sparkmesh.snapshot.naming import PROD
from dagster_sparkmesh.snapshot.records import ChangeCategory, Interval

if TYPE_CHECKING:
    from dagster_sparkmesh.plan.versions import Decision


@dataclass(frozen=True)
class RestatementInputs:
    models: Mapping[str, Model]
    """The plan's models in topological order (parents first)."""
    windows: Mapping[str, Interval]
    """Model → the plan's window for it."""
    recorded: Mapping[str, list[Interval]]
    """Model → its recorded intervals (models with a physical table only)."""
    shared_with_prod: frozenset[str] = frozenset()
    """Models whose table prod reads, in a development plan: never restated."""


def restated_by_user(
    models: Mapping[str, Model], windows: Mapping[str, Interval], names: Iterable[str], within: Interval | None = None,
    partial: Collection[str] = (),
) -> dict[str, Interval]:
    """The models named by ``--restate-model``: their window in the plan, or only its part ``within`` (a Dagster
    run's partitions); their readers follow in ``restatements``. ``partial``: models whose window ends in a partial
    interval (``allow_partials``), which is restated with the rest."""
    seeds: dict[str, Interval] = {}
    for name in names:
        if name not in models:
            raise PlanError(
                f"cannot restate unknown model {name!r}",
                snippet=name,
                hint=f"restate one of the project's models ({', '.join(sorted(models)[:10])}...)",
            )
        intervals = expected_intervals(interval_cron(models[name]), windows[name].start, windows[name].end,
                                       partial=name in partial)
        if within is not None:
            intervals = [i for i in intervals if within.start <= i.start and i.end <= within.end]
        span = merge(intervals)
        if span:
            seeds[name] = Interval(start=span[0].start, end=span[-1].end)
    return seeds


def effective_from_ranges(
    decisions: Mapping[str, Decision],
    windows: Mapping[str, Interval],
    start: datetime,
    environment: str,
    typed: object,
) -> dict[str, Interval]:
    """Forward-only models restate ``[start, end)`` in prod (their readers follow); elsewhere their table is
    prod's, so nothing. ``typed``: the option as the user gave it, for the error."""
    forward_only = [
        name
        for name, d in decisions.items()
        if d.status in ("direct", "indirect") and d.snapshot.change_category == ChangeCategory.FORWARD_ONLY
    ]
    if not forward_only:
        raise PlanError(
            "--effective-from applies to forward-only changes, and this plan has none",
            snippet=f"--effective-from {typed}",
            hint="plan with --forward-only, or drop --effective-from",
        )
    if environment != PROD:
        return {}
    return {
        name: Interval(start=max(start, windows[name].start), end=windows[name].end)
        for name in forward_only
        if name in windows
        and max(start, windows[name].start) < windows[name].end
        and decisions[name].model.kind.has_physical_layer
    }


def filled_behind(inputs: RestatementInputs) -> dict[str, Interval]:
    """Unique-key models asked to compute time before data they already hold: upserting the earlier rows would put
    them over newer ones, so the model is restated (rebuilt whole, in order) instead."""
    seeds: dict[str, Interval] = {}
    for name, model in inputs.models.items():
        recorded = inputs.recorded.get(name)
        if not model.kind.upserts or not recorded:
            continue
        window = inputs.windows[name]
        expected = expected_intervals(interval_cron(model), window.start, window.end)
        done = merge(recorded)
        todo = [i for i in expected if not any(d.start <= i.start and i.end <= d.end for d in done)]
        if todo and todo[0].end <= done[-1].end:
            seeds[name] = Interval(start=todo[0].start, end=done[-1].end)
    return seeds


def union(first: Mapping[str, Interval], second: Mapping[str, Interval]) -> dict[str, Interval]:
    """Per model, the hull of both ranges."""
    merged = dict(first)
    for name, span in second.items():
        merged[name] = _hull([merged[name], span]) if name in merged else span
    return merged


def restatements(inputs: RestatementInputs, seeds: Mapping[str, Interval]) -> tuple[dict[str, Interval], list[str]]:
    """Model → the range whose recorded intervals are removed; and notes on what was not restated and why."""
    ranges: dict[str, Interval] = {}
    notes: list[str] = []
    for name, model in inputs.models.items():
        wanted = [seeds[name]] if name in seeds else []
        wanted += [_read_range(ranges[p], model) for p in sorted(model.depends_on) if p in ranges]
        if not wanted:
            continue
        if name not in inputs.recorded:  # no table (embedded): passes the range on to its readers
            ranges[name] = _hull(wanted)
            continue
        if getattr(model.kind, "disable_restatement", False):
            notes.append(f"{name} not restated: disable_restatement (its kind's, or its kind's default)")
            continue
        if name in inputs.shared_with_prod:
            notes.append(f"{name} not restated: its table is the one prod reads (restate it in prod)")
            continue
        span = _restated_span(model, _hull(wanted), inputs.windows[name], inputs.recorded[name])
        if span is not None:
            ranges[name] = span
    return {name: span for name, span in ranges.items() if name in inputs.recorded}, notes


def _read_range(parent_range: Interval, child: Model) -> Interval:
    """The child's time that read ``parent_range``: ``lookback`` more intervals after it."""
    end = parent_range.end
    lookback = getattr(child.kind, "lookback", 0) or 0
    if lookback:
        schedule = Schedule.of(interval_cron(child))
        end = schedule.floor(end) if schedule.floor(end) == end else schedule.next(end)
        for _ in range(lookback):
            end = schedule.next(end)
    return Interval(start=parent_range.start, end=end)


def _restated_span(model: Model, wanted: Interval, window: Interval, recorded: list[Interval]) -> Interval | None:
    if model.kind.restates_whole_table:
        span = merge(expected_intervals(interval_cron(model), window.start, window.end) + recorded)
        return Interval(start=span[0].start, end=span[-1].end) if span else None
    last = max([window.end] + [i.end for i in recorded])
    # A model reading itself carries every restated interval into all the later ones.
    start, end = wanted.start, last if model.depends_on_self else min(wanted.end, last)
    return Interval(start=start, end=end) if start < end else None


def _hull(ranges: Iterable[Interval]) -> Interval:
    ranges = list(ranges)
    return Interval(start=min(r.start for r in ranges), end=max(r.end for r in ranges))
