"""Build a Plan: compare the project with an environment through a read-only state interface. Pure: no writes.

A new environment is compared with the one it is created from (``prod`` by default), so a fresh ``dev`` shows
only what differs from prod and reuses prod's tables for everything else.

Time window: the plan runs from ``start`` (default: the earliest model start) to ``end`` (default: the
execution time). Each model expects its complete cron intervals from max(model start, plan start) to
min(model end, plan end); a model without a start (nor a project default) starts with the earliest model that
has one (the day before the execution time when none has). FULL, VIEW and SEED models are rebuilt as a whole:
when one of their intervals within the window is missing, every interval from the model's own start is listed (and recorded once the rebuild is done, for the
time its parents covered: ``plan.coverage``). Restatements flow down the DAG (``plan.restatements``): whole-table
kinds lose every interval, lookback and self-referencing readers the intervals that read the restated range.
Unique-key and SCD type 2 models are not rebuilt: each run merges the query's current rows into the table once
for all its missing intervals (a unique-key table with no interval left is built anew).

In a development environment a FORWARD_ONLY snapshot (and every descendant) is previewed on a table of its own
over a limited preview range (``plan.previews``): the shared table stays as prod reads it (architecture invariant 6).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from dagster_sparkmesh.errors import PlanError, SparkMeshError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.dates import DateLike, parse_datetime, parse_ttl
from dagster_sparkmesh.plan.definition import DirectChange, Plan
from dagster_sparkmesh.plan.diffs import definition_diff
from dagster_sparkmesh.plan.intervals import interval_cron
from dagster_sparkmesh.plan.missing import Window, missing_intervals
from dagster_sparkmesh.plan.windows import model_windows
from dagster_sparkmesh.plan.previews import preview_from, preview_range, preview_version, previewed_models
from dagster_sparkmesh.plan.auto_restatements import scheduled_restatements
from dagster_sparkmesh.plan.restatements import (
    RestatementInputs,
    effective_from_ranges,
    filled_behind,
    restated_by_user,
    union,
)
from dagster_sparkmesh.plan.restatements import restatements as restatement_ranges
from dagster_sparkmesh.plan.standalone_audits import with_standalone_audits
from dagster_sparkmesh.plan.versions import Decision, VersionContext, decide, moved_range_note
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.naming import PROD, validate_identifier
from dagster_sparkmesh.snapshot.records import (
    ChangeCategory,
    Environment,
    EnvironmentSnapshot,
    Interval,
    Snapshot,
    SnapshotId,
)
from dagster_sparkmesh.state.reader import StateReader

# Kinds computed as a whole: when one interval is missing, the plan lists every interval of the model.
@dataclass(frozen=True)
class _Previews:
    """The models a development plan previews: their preview versions and ranges, and where previews start."""

    versions: dict[str, str]
    ranges: dict[str, Interval]
    begin: datetime | None


_NO_PREVIEWS = _Previews(versions={}, ranges={}, begin=None)


def build_plan(
    project: Project,
    state: StateReader,
    environment: str,
    *,
    start: DateLike | None = None,
    end: DateLike | None = None,
    execution_time: datetime,
    forward_only: bool = False,
    restate_models: Iterable[str] = (),
    create_from: str = PROD,
    plan_id: str | None = None,
    selected: Iterable[str] | None = None,
    effective_from: DateLike | None = None,
    categories: Mapping[str, ChangeCategory] | None = None,
    preview_start: DateLike | None = None,
    include_unmodified: bool | None = None,
    restate_within: Interval | None = None,
    partial_intervals: bool = True,
    looked_for_restatements: Mapping[tuple[str, str], datetime] | None = None,
) -> Plan:
    """``selected``: plan only these models' changes; the others keep the environment's current snapshots.
    ``effective_from``: forward-only models recompute their intervals from that date once applied to prod.
    ``categories``: the user's category (breaking / non-breaking) for changes the categorizer left undecided.
    ``preview_start``: where forward-only previews start in a development environment (default: ``start``, else
    the last ``preview_days`` days before the end); re-planning an environment as it is passes its own.
    ``include_unmodified``: a development environment gets a view of every model (default: the project's
    ``plan.include_unmodified``, false as in SQLMesh: views of the models changed in it only).
    ``restate_within``: restate ``restate_models`` over this part of their window only (a Dagster run's range).
    ``partial_intervals``: ``allow_partials`` models compute their interval so far (False in Dagster, whose
    partitions are whole intervals).
    ``looked_for_restatements``: a run of prod's last looks per (model, version) (``plan.auto_restatements``)."""
    environment = _identifier(environment, "environment name")
    current = state.get_environment(environment)
    base_env = current or (state.get_environment(create_from) if create_from != environment else None)
    base = _base_snapshots(state, base_env)
    models = {name: model for name, model in project.models.items() if model.enabled}
    decisions = _decide_all(models, state, base, forward_only, execution_time, categories or {})
    kept: list[Snapshot] = []
    held_back: set[str] = set()
    if selected is not None:
        decisions, kept, held_back = _keep_unselected(decisions, base, set(selected))
        models = {name: model for name, model in models.items() if name in decisions}

    windows, plan_start, plan_end = model_windows(project, models, start, end, execution_time, partials=partial_intervals)
    begin = preview_from(
        _optional_datetime(preview_start, execution_time),
        _optional_datetime(start, execution_time),
        plan_end,
        project.config.preview_days,
    )
    previews, windows = _previews(state, environment, decisions, windows, held_back, begin)
    versions = {name: previews.versions.get(name, d.snapshot.version) for name, d in decisions.items()}
    recorded = _recorded(state, decisions, versions)
    spans = {name: Interval(start=w.start, end=w.end) for name, w in windows.items()}
    # What a person restates is cleared up to the plan's end, also past a cron's last tick (a @weekly model's days
    # since Sunday, which a Dagster step of those partitions computes: ``plan.ranged``); from the window's start
    # (a preview's, in development).
    uncut, _, _ = model_windows(project, models, start, end, execution_time, ignore_cron=True)
    restatable = {name: Interval(start=w.start, end=w.end if w.partial else max(w.end, uncut[name].end))
                  for name, w in windows.items()}
    partial = frozenset(name for name, w in windows.items() if w.partial)
    seeds = restated_by_user(models, restatable, restate_models, restate_within, partial)
    if effective_from is not None:
        start_at = parse_datetime(effective_from, now=execution_time)
        seeds = union(seeds, effective_from_ranges(decisions, spans, start_at, environment, effective_from))
    scheduled = {} if looked_for_restatements is None else scheduled_restatements(
        models, recorded, looked_for_restatements, [d.snapshot for d in decisions.values()], execution_time)
    seeds = union(seeds, scheduled)
    inputs = RestatementInputs(models, spans, recorded, _shared_with_prod(state, environment, versions))
    seeds = union(seeds, filled_behind(inputs))
    restatements, notes = restatement_ranges(inputs, seeds)
    notes += [note for decision in decisions.values() if (note := moved_range_note(decision))]
    missing = missing_intervals(models, windows, recorded, restatements, inputs.shared_with_prod)
    if held_back:
        missing, unselected_notes = _without_held_back(missing, held_back)
        notes += unselected_notes
    plan_id = plan_id or uuid.uuid4().hex
    by_status = _names_by_status(decisions)
    plan = Plan(
        plan_id=plan_id,
        environment=environment,
        previous_plan_id=current.plan_id if current else None,
        base_environment=base_env.name if base_env else environment,
        is_new_environment=current is None,
        start=plan_start,
        end=plan_end,
        execution_time=execution_time,
        forward_only=forward_only,
        effective_from=_optional_datetime(effective_from, execution_time),
        added=by_status["added"],
        removed=tuple(sorted(set(base) - set(models) - {s.name for s in kept})),
        directly_modified=by_status["direct"],
        indirectly_modified=by_status["indirect"],
        metadata_only=by_status["metadata"],
        direct_changes=_direct_changes(decisions),
        categories=_categories(decisions),
        new_snapshots=tuple(d.snapshot for d in decisions.values() if d.push),
        environment_after=_environment_after(
            environment, plan_id, current, decisions, versions, plan_start, end, project, execution_time, kept,
            _promoted(environment, current, decisions, kept, include_unmodified, project),
        ).model_copy(update={"preview_start": previews.begin}),
        missing_intervals=missing,
        previews=previews.ranges,
        restatements=restatements,
        scheduled_restatements=scheduled,
        notes=tuple(notes),
        # What loading the files warned of travels with the plan: the CLI and Dagster's plan page show it.
        warnings=(*project.warnings, *(d.warning for d in decisions.values() if d.warning)),
        uncategorized=tuple(
            n for n, d in decisions.items() if d.push and d.snapshot.change_category == ChangeCategory.UNCATEGORIZED
        ),
    )
    return with_standalone_audits(plan, project, base_env)


def _optional_datetime(value: DateLike | None, now: datetime) -> datetime | None:
    return parse_datetime(value, now=now) if value is not None else None


def _previews(state: StateReader, environment: str, decisions: dict[str, Decision], windows: dict[str, Window],
              held_back: set[str], begin: datetime) -> tuple[_Previews, dict[str, Window]]:
    """A development plan's previews, and the model windows narrowed to the preview range for them."""
    if environment == PROD:
        return _NO_PREVIEWS, windows
    prod = state.get_environment(PROD)
    promoted = {s.name: s.fingerprint for s in prod.snapshots} if prod else {}
    names = previewed_models(((d.model, d.snapshot) for d in decisions.values()), promoted, held_back)
    if not names:
        return _NO_PREVIEWS, windows
    ranges = {
        name: preview_range(interval_cron(decisions[name].model), windows[name].start, windows[name].end, begin)
        for name in names
    }
    # A preview table holds the preview range only, for rebuilt kinds too: they read previews of their parents.
    narrowed = {
        name: dataclasses.replace(window, start=ranges[name].start, model_start=ranges[name].start)
        if name in ranges
        else window
        for name, window in windows.items()
    }
    versions = {name: preview_version(decisions[name].snapshot) for name in names}
    return _Previews(versions=versions, ranges=ranges, begin=begin), narrowed


def _keep_unselected(
    decisions: dict[str, Decision], base: dict[str, Snapshot], selected: set[str]
) -> tuple[dict[str, Decision], list[Snapshot], set[str]]:
    """Unselected models keep the base snapshot: not added if new, not removed if deleted, not changed if edited.

    Returns the decisions, the base snapshots of deleted models kept, and the edited models held back."""
    kept_decisions: dict[str, Decision] = {}
    held_back: set[str] = set()
    for name, d in decisions.items():
        if name in selected or d.status == "unchanged":
            kept_decisions[name] = d
        elif name in base:
            kept_decisions[name] = Decision(d.previous or d.model, "unchanged", base[name], False, d.previous)
            held_back.add(name)
    removed_kept = [snapshot for name, snapshot in base.items() if name not in decisions and name not in selected]
    return kept_decisions, removed_kept, held_back


def _without_held_back(
    missing: dict[str, tuple[Interval, ...]], held_back: set[str]
) -> tuple[dict[str, tuple[Interval, ...]], list[str]]:
    """A held-back model keeps its old table, which its new query must not fill: leave it to a later plan."""
    notes = [
        f"{name}: changed but not selected; its missing intervals wait for a plan that selects it"
        for name in sorted(held_back & missing.keys())
    ]
    return {n: i for n, i in missing.items() if n not in held_back}, notes


def _identifier(text: str, what: str) -> str:
    try:
        return validate_identifier(text, what)
    except SparkMeshError as error:
        raise PlanError(error.message, snippet=text, hint=error.hint) from None


def _base_snapshots(state: StateReader, env: Environment | None) -> dict[str, Snapshot]:
    if env is None:
        return {}
    found = state.get_snapshots(SnapshotId(name=s.name, fingerprint=s.fingerprint) for s in env.snapshots)
    missing = [s.name for s in env.snapshots if SnapshotId(name=s.name, fingerprint=s.fingerprint) not in found]
    if missing:
        raise PlanError(
            f"environment {env.name} refers to snapshots the state store does not hold: {', '.join(sorted(missing))}",
            hint="the state store is inconsistent; restore it or invalidate the environment",
        )
    promoted = {s.name: s.metadata_hash for s in env.snapshots if s.metadata_hash is not None}
    # Compare with the metadata this environment was promoted with, not the latest pushed for the fingerprint.
    return {
        snapshot.name: snapshot.model_copy(update={"metadata_hash": promoted.get(snapshot.name, snapshot.metadata_hash)})
        for snapshot in found.values()
    }


def _decide_all(
    models: dict[str, Model],
    state: StateReader,
    base: dict[str, Snapshot],
    forward_only: bool,
    now: datetime,
    categories: Mapping[str, ChangeCategory],
) -> dict[str, Decision]:
    stored = state.get_snapshots(SnapshotId(name=m.name, fingerprint=m.fingerprint) for m in models.values())
    ctx = VersionContext(base=base, stored=stored, forward_only=forward_only, created_at=now)
    decisions: dict[str, Decision] = {}
    for name, model in models.items():  # topological order: parents are decided first
        decisions[name] = _with_category(decide(model, decisions, ctx), categories)
    return decisions


def _with_category(decision: Decision, categories: Mapping[str, ChangeCategory]) -> Decision:
    """The user's answer for an undecided change; decided before the children, which read their parents' category."""
    chosen = categories.get(decision.model.name)
    if decision.snapshot.change_category != ChangeCategory.UNCATEGORIZED or chosen is None:
        return decision
    if chosen not in (ChangeCategory.BREAKING, ChangeCategory.NON_BREAKING):
        raise PlanError(f"{decision.model.name}: a change is categorized breaking or non-breaking, not {chosen.value}")
    return dataclasses.replace(decision, snapshot=decision.snapshot.model_copy(update={"change_category": chosen}))


def _recorded(
    state: StateReader, decisions: dict[str, Decision], versions: dict[str, str]
) -> dict[str, list[Interval]]:
    return {
        name: state.get_intervals(name, versions[name])
        for name, d in decisions.items()
        if d.model.kind.has_physical_layer
    }


def _shared_with_prod(state: StateReader, environment: str, versions: dict[str, str]) -> frozenset[str]:
    if environment == PROD:
        return frozenset()
    prod = state.get_environment(PROD)
    prod_versions = {(s.name, s.version) for s in prod.snapshots} if prod else set()
    return frozenset(name for name, version in versions.items() if (name, version) in prod_versions)


def _names_by_status(decisions: dict[str, Decision]) -> dict[str, tuple[str, ...]]:
    statuses = ("added", "direct", "indirect", "metadata", "unchanged")
    return {status: tuple(n for n, d in decisions.items() if d.status == status) for status in statuses}


def _direct_changes(decisions: dict[str, Decision]) -> dict[str, DirectChange]:
    return {
        name: DirectChange(
            name=name,
            category=d.snapshot.change_category or ChangeCategory.BREAKING,
            diff=definition_diff(d.previous, d.model),
            destructive=d.destructive,
        )
        for name, d in decisions.items()
        if d.status == "direct"
    }


def _categories(decisions: dict[str, Decision]) -> dict[str, ChangeCategory]:
    return {
        name: d.snapshot.change_category
        for name, d in decisions.items()
        if d.status != "unchanged" and d.snapshot.change_category is not None
    }


def _promoted(
    environment: str,
    current: Environment | None,
    decisions: dict[str, Decision],
    kept: list[Snapshot],
    include_unmodified: bool | None,
    project: Project,
) -> frozenset[str] | None:
    """The models the environment will have views of; None: every model (production, or ``include_unmodified``).

    As in SQLMesh: the models added or changed against the environment's base (itself, or the environment it is
    created from), and those it had views of before; a model changed back keeps its view (of the version it has
    now), so the environment's views never vanish under a user between two plans."""
    if include_unmodified is None:
        include_unmodified = project.config.plan.include_unmodified
    if environment == PROD or include_unmodified:
        return None
    before = {s.name for s in current.snapshots if s.promoted} if current else set()
    changed = {name for name, d in decisions.items() if d.status != "unchanged"}
    present = set(decisions) | {s.name for s in kept}
    return frozenset((before | changed) & present)


def _environment_after(
    environment: str,
    plan_id: str,
    current: Environment | None,
    decisions: dict[str, Decision],
    versions: dict[str, str],
    start: datetime,
    end: DateLike | None,
    project: Project,
    now: datetime,
    kept: list[Snapshot] = (),  # type: ignore[assignment]
    promoted: frozenset[str] | None = None,
) -> Environment:
    snapshots = tuple(
        EnvironmentSnapshot(
            name=s.name,
            fingerprint=s.fingerprint,
            version=versions.get(s.name, s.version),
            kind_name=s.kind_name,
            catalog=s.catalog,
            metadata_hash=s.metadata_hash,
            promoted=promoted is None or s.name in promoted,
        )
        for s in [*(d.snapshot for d in decisions.values()), *kept]
    )
    return Environment(
        name=environment,
        plan_id=plan_id,
        previous_plan_id=current.plan_id if current else None,
        snapshots=snapshots,
        start=start,
        end=parse_datetime(end, now=now) if end is not None else None,
        expires_at=None if environment == PROD else now + parse_ttl(project.config.environment_ttl),
        promoted_at=now,
    )
