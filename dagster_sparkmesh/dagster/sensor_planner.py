"""The git sensor's access to plans: build and store a plan of a commit, read what it still misses, and tell
whether a person has promoted it (the approval of a plan that waits for one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Protocol

from dagster_sparkmesh.clock import utc_now
from dagster_sparkmesh.dagster.specs import selected_models
from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.stored import changed_since, decode, still_missing, store_plan
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.state.store import StateStore, open_state_store


class SensorPlanner(Protocol):
    """The sensor's access to plans (I/O: the state store)."""

    def plan(self, project: Project) -> Plan:
        """A new plan of ``project`` against the sensor's environment, stored under its id."""
        ...

    def remaining(self, project: Project, plan_id: str) -> Plan | None:
        """The stored plan with only the intervals still missing now; None when it is not stored (or stale)."""
        ...

    def promoted(self, project: Project, plan_id: str) -> bool:
        """Whether the environment now serves what the stored plan promotes (whoever promoted it)."""
        ...

    def recorded(self, project: Project, versions: Mapping[str, str]) -> dict[str, tuple[Interval, ...]]:
        """The intervals recorded complete per model at its version in ``versions``."""
        ...


class StatePlanner:
    """The default planner: plans against the project's state store (or ``state_url``), as of ``clock()``."""

    def __init__(
        self,
        environment: str,
        state_url: str | None,
        clock: Callable[[], datetime] = utc_now,
        selection: tuple[Sequence[str], Sequence[str]] = ((), ()),
    ) -> None:
        self.environment = environment
        self.state_url = state_url
        self.clock = clock
        self.selection = selection
        """(select, exclude) of the definitions: their plans take only those models' changes (``--select-model``),
        so that no interval is left for a model this code location does not run."""

    def plan(self, project: Project) -> Plan:
        select, exclude = self.selection
        chosen = selected_models(project, select, exclude) if select or exclude else None
        with self._state(project) as state:
            plan = build_plan(project, state, self.environment, execution_time=self.clock(), selected=chosen,
                              partial_intervals=False)  # Dagster's partitions are whole intervals
            return store_plan(state, plan)

    def remaining(self, project: Project, plan_id: str) -> Plan | None:
        with self._state(project) as state:
            stored = state.get_plan(plan_id)
            if stored is None:
                return None
            plan = decode(stored.plan_json)
            if changed_since(plan, project):
                return None
            return plan.model_copy(update={"missing_intervals": still_missing(state, plan)})

    def missing_within(self, project: Project, spans: Mapping[str, Sequence[Interval]]) -> Plan:
        """A plan (not stored) whose missing intervals are those of ``spans`` that the environment's own versions
        miss now: what restatements took from readers. Models the project changes are the git sensor's business."""
        with self._state(project) as state:
            plan = build_plan(project, state, self.environment, execution_time=self.clock(), partial_intervals=False)
        changed = {*plan.added, *plan.directly_modified, *plan.indirectly_modified}
        missing = {
            name: kept for name, intervals in plan.missing_intervals.items()
            if name in spans and name not in changed
            and (kept := tuple(i for i in intervals if any(i.start < s.end and s.start < i.end for s in spans[name])))
        }
        return plan.model_copy(update={"missing_intervals": missing})

    def recorded(self, project: Project, versions: Mapping[str, str]) -> dict[str, tuple[Interval, ...]]:
        """The intervals recorded complete per model at its version in ``versions``."""
        with self._state(project) as state:
            return {name: tuple(state.get_intervals(name, version)) for name, version in versions.items()}

    def stored_plan(self, project: Project, plan_id: str) -> str | None:
        """The JSON of a stored plan (a run's own, ``dagster-<run id>``), None when there is none."""
        with self._state(project) as state:
            stored = state.get_plan(plan_id)
            return stored.plan_json if stored is not None else None

    def promoted(self, project: Project, plan_id: str) -> bool:
        with self._state(project) as state:
            current = state.get_environment(self.environment)
            stored = state.get_plan(plan_id)
            if current is None or stored is None:
                return False
            if current.plan_id == plan_id:
                return True
            # A promotion from the UI may have built its own plan of the same commit: same versions, other id.
            wanted = decode(stored.plan_json).environment_after
            return _served(current) == _served(wanted)

    def _state(self, project: Project) -> StateStore:
        return open_state_store(self.state_url or project.config.state.url, project.runtime_path)


def _served(environment) -> frozenset[tuple[str, str]]:
    return frozenset((s.name, s.fingerprint) for s in environment.snapshots if s.promoted)
