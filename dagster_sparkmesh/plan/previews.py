"""Forward-only changes previewed in a development environment, on tables of their own. Pure.

A FORWARD_ONLY snapshot keeps the previous version, whose physical table prod reads. Computing the changed query
into that table from a development environment would change what prod returns (architecture invariant 6), and Spark
has no zero-copy clones to fork it cheaply. So, outside prod, such a snapshot is *previewed*: the environment
points at a separate table, named by a preview version derived from the snapshot's fingerprint (two development
environments with the same change share it; prod never names it), computed with the new query over a limited
preview range only. Its intervals are recorded under the preview version, so the shared version's intervals,
and therefore prod's, are untouched.

Every descendant of a previewed model is previewed too: it reads the preview table, so its rows must not land in
a table prod reads either (whether it shares its predecessor's version or has a version of its own that prod
would later reuse as if it held the whole history). A forward-only snapshot that prod already points at is not
a preview any more: prod's table holds its data.

When applied to prod, the same snapshot reuses the previous version's table as any forward-only change does;
the janitor drops a preview table once no environment points at it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping
from datetime import datetime, timedelta

from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.plan.intervals import expected_intervals
from dagster_sparkmesh.snapshot.naming import PREVIEW_MARKER
from dagster_sparkmesh.snapshot.records import ChangeCategory, Interval, Snapshot


def preview_version(snapshot: Snapshot) -> str:
    """The version of ``snapshot``'s preview table: the shared version it previews, then a digest of the snapshot."""
    digest = hashlib.sha256(f"preview\0{snapshot.name}\0{snapshot.fingerprint}".encode()).hexdigest()[:10]
    return f"{snapshot.version}{PREVIEW_MARKER}{digest}"


def previewed_models(
    models: Iterable[tuple[Model, Snapshot]],
    promoted: Mapping[str, str],
    held_back: Collection[str] = (),
) -> set[str]:
    """Names of the materialized models previewed in a development environment.

    ``models``: each model with its snapshot, parents first; ``promoted``: prod's model name → fingerprint;
    ``held_back``: models that keep their base snapshot (not selected), never previewed nor computed here.
    """
    previewed: set[str] = set()
    materialized: set[str] = set()
    for model, snapshot in models:
        if model.name in held_back:
            continue
        forward_only = snapshot.change_category == ChangeCategory.FORWARD_ONLY
        if (forward_only and promoted.get(model.name) != snapshot.fingerprint) or model.depends_on & previewed:
            previewed.add(model.name)  # embedded models pass it on too: their readers inline them
            if model.kind.has_physical_layer:
                materialized.add(model.name)
    return materialized


def preview_from(
    explicit: datetime | None, plan_start: datetime | None, plan_end: datetime, preview_days: int
) -> datetime:
    """Where previews start: the environment's recorded preview start, else the plan's ``--start``, else
    ``preview_days`` days before the plan's end."""
    if explicit is not None:
        return explicit
    if plan_start is not None:
        return plan_start
    return plan_end - timedelta(days=preview_days)


def preview_range(cron: str, start: datetime, end: datetime, begin: datetime) -> Interval:
    """What a model computes in its preview within its window ``[start, end)``: its complete intervals that end
    after ``begin``, or its last complete interval when none does (a monthly model previewed for a day)."""
    intervals = expected_intervals(cron, start, end)
    if not intervals:
        return Interval(start=start, end=end)
    inside = [interval for interval in intervals if interval.end > begin]
    first = inside[0] if inside else intervals[-1]
    return Interval(start=max(start, first.start), end=intervals[-1].end)
