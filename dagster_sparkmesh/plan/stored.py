"""Plans kept in the state store, so that one plan travels: from the CLI or the git sensor that built it, through
every Dagster step that backfills part of it, to the promotion that swaps its views.

A stored plan is still current when the project's models have the fingerprints the plan was built from; a step
checks that (a dictionary comparison, no state read) before executing the plan's backfill stage.
"""

from __future__ import annotations

import base64
import zlib
from typing import TYPE_CHECKING

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.plan.definition import Plan

if TYPE_CHECKING:
    from dagster_sparkmesh.project.records import Project
    from dagster_sparkmesh.snapshot.records import Interval
    from dagster_sparkmesh.state.store import StateStore


def store_plan(state: StateStore, plan: Plan) -> Plan:
    """Store ``plan`` under its id; when a plan is stored under that id already, that one is returned (two steps of
    one Dagster run that both planned execute the first one stored)."""
    if state.save_plan(plan.plan_id, plan.environment, encode(plan)):
        return plan
    return load_plan(state, plan.plan_id)


def ensure_stored(state: StateStore, plan: Plan) -> None:
    """Store ``plan`` unless it is stored already (a plan loaded from the store is not written again)."""
    if state.get_plan(plan.plan_id) is None:
        state.save_plan(plan.plan_id, plan.environment, encode(plan))


def load_plan(state: StateStore, plan_id: str) -> Plan:
    stored = state.get_plan(plan_id)
    if stored is None:
        raise PlanError(
            f"plan {plan_id} is not in the state store",
            hint="the run was tagged with a plan the janitor removed or another state store holds: "
            "launch it again without the sparkmesh/plan_id tag (it then plans itself), or let the sensor re-plan",
        )
    return decode(stored.plan_json)


def encode(plan: Plan) -> str:
    """The plan's JSON, compressed: a plan lists every missing interval (7.7 MB of JSON for 1,000 models over 90
    days, 0.2 MB compressed), and the state store keeps one per decision."""
    return _COMPRESSED + base64.b64encode(zlib.compress(plan.model_dump_json().encode(), 6)).decode("ascii")


def decode(text: str) -> Plan:
    if text.startswith(_COMPRESSED):
        text = zlib.decompress(base64.b64decode(text[len(_COMPRESSED):])).decode()
    return Plan.model_validate_json(text)


_COMPRESSED = "zlib:"


def is_prepared(state: StateStore, plan_id: str) -> bool:
    stored = state.get_plan(plan_id)
    return stored is not None and stored.prepared_at is not None


def still_missing(state: StateStore, plan: Plan) -> dict[str, tuple[Interval, ...]]:
    """The plan's missing intervals that are not recorded yet (what its backfill has left to do)."""
    versions = {s.name: s.version for s in plan.environment_after.snapshots}
    left = {name: state.missing_intervals(name, versions[name], list(intervals)) for name, intervals in plan.missing_intervals.items()}
    return {name: tuple(intervals) for name, intervals in left.items() if intervals}


def changed_since(plan: Plan, project: Project) -> list[str]:
    """The models (and standalone audits, as ``audit <name>``) whose definition differs from the one ``plan`` was
    built from (added, removed or edited)."""
    planned = {s.name: s.fingerprint for s in plan.environment_after.snapshots}
    planned.update({f"audit {name}": fp for name, fp in plan.environment_after.standalone_audits.items()})
    current = {name: model.fingerprint for name, model in project.models.items() if model.enabled}
    current.update({f"audit {name}": a.fingerprint for name, a in project.standalone_audits.items() if not a.skip})
    return sorted(name for name in planned.keys() | current.keys() if planned.get(name) != current.get(name))


def check_current(plan: Plan, project: Project) -> None:
    """Refuse to execute a plan built from other project files: its tables and versions are not this project's."""
    changed = changed_since(plan, project)
    if changed:
        shown = ", ".join(changed[:10]) + (f" and {len(changed) - 10} more" if len(changed) > 10 else "")
        raise StalePlan(
            f"plan {plan.plan_id[:12]} was built from other project files than the ones loaded now ({shown})",
            hint="re-plan: the git sensor does on its next tick; or launch the run without the sparkmesh/plan_id "
            "tag so that it plans the current files itself",
        )


class StalePlan(PlanError):
    """The stored plan no longer matches the project: executing it would write another project's tables."""
