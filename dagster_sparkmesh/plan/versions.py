"""Decide each model's snapshot: how it changed compared with the environment, its category and its version.

The rules, in order, for a model of the project:

1. The state already holds a snapshot with this (name, fingerprint): reuse it as is, with its version and
   intervals (promoting dev's work to prod recomputes nothing). If only its metadata differs, a new record with
   the same fingerprint and version is pushed (the store upserts metadata).
2. Not in the base environment: added, a new version.
3. Own data hash changed (a direct change): FORWARD_ONLY for a forward-only plan or model (incremental kinds
   only: other kinds have no history to keep), reusing the previous version; a destructive forward-only change
   is refused unless the kind allows it. Otherwise BREAKING or NON_BREAKING, both a new version.
4. Only an ancestor changed (an indirect change): FORWARD_ONLY if forward-only as above; INDIRECT_BREAKING
   (new version) when a changed parent is breaking; else INDIRECT_NON_BREAKING, reusing the previous version
   (a plain VIEW takes a new version: its physical view must read its parents' new tables).
   A breaking parent passes the breakage on through its INDIRECT_BREAKING category, so one breaking ancestor on
   any path makes every descendant INDIRECT_BREAKING.

EMBEDDED and EXTERNAL models get snapshots too (their fingerprints are tracked and the environment lists them)
but have no physical table and therefore no intervals.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import ValidationError

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.plan.categorize import (
    ColumnChange,
    added_columns,
    categorize_model_change,
    model_destructive_changes,
)
from dagster_sparkmesh.snapshot.records import ChangeCategory, Snapshot, SnapshotId

Status = Literal["added", "direct", "indirect", "metadata", "unchanged"]

_BREAKS_CHILDREN = {ChangeCategory.BREAKING, ChangeCategory.INDIRECT_BREAKING, ChangeCategory.UNCATEGORIZED, None}


@dataclass(frozen=True)
class Decision:
    model: Model
    status: Status
    snapshot: Snapshot
    push: bool
    """Whether the snapshot is new to the state store (or carries new metadata)."""
    previous: Model | None = None
    destructive: tuple[ColumnChange, ...] = ()
    warning: str | None = None


@dataclass(frozen=True)
class VersionContext:
    base: dict[str, Snapshot]
    """Model name → the base environment's snapshot."""
    stored: dict[SnapshotId, Snapshot]
    """Snapshots the state holds for the project's fingerprints."""
    forward_only: bool
    created_at: datetime


def new_version(name: str, fingerprint: str) -> str:
    """A version unique to (name, fingerprint); starts with a letter so that it is a valid identifier part."""
    return "v" + hashlib.sha256(f"{name}\0{fingerprint}".encode()).hexdigest()[:12]


def decide(model: Model, decided: dict[str, Decision], ctx: VersionContext) -> Decision:
    """The snapshot of ``model``; ``decided`` holds the decisions of its parents (topological order)."""
    base = ctx.base.get(model.name)
    previous = _load_model(base) if base else None
    status = _status(model, base, previous)
    stored = ctx.stored.get(SnapshotId(name=model.name, fingerprint=model.fingerprint))
    if stored is not None:
        category = ChangeCategory.METADATA if status == "metadata" else stored.change_category
        push = stored.metadata_hash != model.metadata_hash
        snapshot = _snapshot(model, stored.version, category, base, decided, ctx) if push else stored
        return Decision(model, status, snapshot, push, previous)
    if base is None or (status == "direct" and previous is None):
        version = new_version(model.name, model.fingerprint)
        snapshot = _snapshot(model, version, ChangeCategory.BREAKING, base, decided, ctx)
        return Decision(model, status, snapshot, True, previous)
    if status == "direct" and previous is not None:
        return _direct(model, base, previous, decided, ctx)
    if status == "indirect" and previous is not None:
        return _indirect(model, base, previous, decided, ctx)
    # Same fingerprint as the base but missing from the store: keep the base's version.
    category = ChangeCategory.METADATA if status == "metadata" else base.change_category
    return Decision(model, status, _snapshot(model, base.version, category, base, decided, ctx), True, previous)


def _status(model: Model, base: Snapshot | None, previous: Model | None) -> Status:
    if base is None:
        return "added"
    if base.fingerprint == model.fingerprint:
        return "unchanged" if base.metadata_hash == model.metadata_hash else "metadata"
    if previous is None or previous.data_hash != model.data_hash:
        return "direct"
    return "indirect"


def _direct(
    model: Model, base: Snapshot, previous: Model, decided: dict[str, Decision], ctx: VersionContext
) -> Decision:
    if not _is_forward_only(model, previous, ctx):
        category = categorize_model_change(previous, model)
        version = new_version(model.name, model.fingerprint)
        return Decision(model, "direct", _snapshot(model, version, category, base, decided, ctx), True, previous)
    if previous.catalog != model.catalog:
        raise PlanError(
            f"{model.name}: a forward-only change cannot move the model's table to another catalog "
            f"({previous.catalog or 'the session catalog'} to {model.catalog or 'the session catalog'})",
            hint="plan the change without --forward-only (a new table is built in the new catalog), or keep the "
            "catalog's declaration as it was",
        )
    _refuse_changed_managed_columns(model, previous)
    destructive = tuple(model_destructive_changes(previous, model))
    warnings = [_check_destructive(model, destructive), _check_additive(model, added_columns(previous, model))]
    warning = "; ".join(w for w in warnings if w) or None
    snapshot = _snapshot(model, base.version, ChangeCategory.FORWARD_ONLY, base, decided, ctx)
    return Decision(model, "direct", snapshot, True, previous, destructive, warning)


def _indirect(
    model: Model, base: Snapshot, previous: Model, decided: dict[str, Decision], ctx: VersionContext
) -> Decision:
    if _is_forward_only(model, previous, ctx):
        category, version = ChangeCategory.FORWARD_ONLY, base.version
    elif any(_breaks_children(decided[p]) for p in model.depends_on if p in decided):
        category, version = ChangeCategory.INDIRECT_BREAKING, new_version(model.name, model.fingerprint)
    elif _is_plain_view(model) and _parent_tables_changed(model, decided, ctx):
        # A view's rows are its parents' tables read now: it must read the new ones, so it gets a view of its own
        # (creating one costs nothing), and the old version keeps reading the tables its environments still use.
        category, version = ChangeCategory.INDIRECT_NON_BREAKING, new_version(model.name, model.fingerprint)
    else:
        category, version = ChangeCategory.INDIRECT_NON_BREAKING, base.version
    return Decision(model, "indirect", _snapshot(model, version, category, base, decided, ctx), True, previous)


def _is_plain_view(model: Model) -> bool:
    return model.kind.plain_view


def _parent_tables_changed(model: Model, decided: dict[str, Decision], ctx: VersionContext) -> bool:
    """Whether a parent gets another table than the base environment's (a forward-only parent keeps its own)."""
    return any(
        p in decided and (p not in ctx.base or decided[p].snapshot.version != ctx.base[p].version)
        for p in model.depends_on
    )


def _breaks_children(parent: Decision) -> bool:
    changed = parent.status in {"added", "direct", "indirect"}
    return changed and parent.snapshot.change_category in _BREAKS_CHILDREN


def _is_forward_only(model: Model, previous: Model, ctx: VersionContext) -> bool:
    """Whether the change keeps the previous version's table. Never across kinds: each kind's table has its own
    layout (a period table, a generation table, a history with validity columns), which another kind cannot write."""
    if not model.kind.may_be_forward_only or type(previous.kind) is not type(model.kind):
        return False
    return ctx.forward_only or bool(getattr(model.kind, "forward_only", False))


def _refuse_changed_managed_columns(model: Model, previous: Model) -> None:
    """The columns the kind adds itself (an SCD type 2 history's validity) hold the history: a forward-only change
    cannot rename or retype them in the table it keeps."""
    before, after = previous.kind.managed_columns, model.kind.managed_columns
    if before != after:
        described = [", ".join(f"{name} {data_type}" for name, data_type in columns) for columns in (before, after)]
        raise PlanError(
            f"forward-only change to {model.name} changes the columns its kind keeps ({described[0]} to "
            f"{described[1]}) in the table it keeps",
            path=model.path,
            line=model.line,
            hint="keep valid_from_name, valid_to_name and time_data_type as they were, or write forward_only false "
            "in the kind to build a new history (the versions before are not kept)",
        )


def _check_destructive(model: Model, changes: tuple[ColumnChange, ...]) -> str | None:
    if not changes:
        return None
    policy = getattr(model.kind, "on_destructive_change", "error")
    described = "; ".join(change.describe() for change in changes)
    if policy == "error":
        raise PlanError(
            f"forward-only change to {model.name} is destructive: {described}",
            path=model.path,
            line=model.line,
            snippet=", ".join(change.name for change in changes),
            hint="keep the columns, or set on_destructive_change 'warn' or 'allow' in the model's kind (or in "
            "model_defaults), "
            "or make a non-forward-only (breaking) change that rebuilds the table",
        )
    return f"forward-only change to {model.name} {described}" if policy == "warn" else None


def _check_additive(model: Model, added: list[str]) -> str | None:
    """SQLMesh's ``on_additive_change``: a forward-only change that adds columns alters the table (``allow``, the
    default; ``warn`` says so), keeps the table's columns (``ignore``), or is refused (``error``)."""
    policy = getattr(model.kind, "on_additive_change", "allow")
    if not added or policy in ("allow", "ignore"):
        return None
    described = f"forward-only change to {model.name} adds column(s) {', '.join(added)}"
    if policy == "error":
        raise PlanError(
            f"{described}: the kind's on_additive_change is 'error'",
            path=model.path,
            line=model.line,
            snippet=", ".join(added),
            hint="remove the columns, set on_additive_change 'allow', 'warn' or 'ignore' in the model's kind (or in "
            "model_defaults), "
            "or make a non-forward-only (breaking) change that rebuilds the table",
        )
    return described


def moved_range_note(decision: Decision) -> str | None:
    """``start`` and ``end`` are metadata, as in SQLMesh: moving them recomputes nothing and drops nothing. Say so
    where the table then differs from a fresh build of the same files (rows outside the new range)."""
    previous, model = decision.previous, decision.model
    if previous is None or decision.status == "added" or (previous.start, previous.end) == (model.start, model.end):
        return None
    return (
        f"{model.name}: start/end moved ({previous.start or '-'} .. {previous.end or '-'} -> "
        f"{model.start or '-'} .. {model.end or '-'}); as in SQLMesh this is metadata only: rows already computed "
        "outside the new range stay in the table (a fresh build would not have them); restate the model "
        "(--restate-model) to rebuild it within the new range"
    )


def _snapshot(
    model: Model,
    version: str,
    category: ChangeCategory | None,
    base: Snapshot | None,
    decided: dict[str, Decision],
    ctx: VersionContext,
) -> Snapshot:
    parents = tuple(
        SnapshotId(name=parent, fingerprint=decided[parent].model.fingerprint)
        for parent in sorted(model.depends_on)
        if parent in decided
    )
    return Snapshot(
        name=model.name,
        fingerprint=model.fingerprint,
        metadata_hash=model.metadata_hash,
        version=version,
        kind_name=model.kind.name,
        catalog=model.catalog,
        change_category=category,
        parents=parents,
        previous_fingerprint=base.fingerprint if base else None,
        model_json=model.model_dump_json(),
        created_at=ctx.created_at,
    )


def _load_model(snapshot: Snapshot) -> Model | None:
    """The base snapshot's model; None if it was stored by an incompatible release (then: a breaking change)."""
    try:
        return Model.model_validate_json(snapshot.model_json)
    except ValidationError:
        return None
