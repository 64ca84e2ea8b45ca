"""The restated readers' sensor: after a person's run restated a model (a "Materialize" of complete partitions),
request runs for the readers that run did not compute, so that late data reaches every view without a plan.

A restating run whose readers live outside it is tagged ``sparkmesh/restated_readers`` (``dagster.assets``). Each
tick looks for such runs that succeeded since the last one it handled (one query, nothing loaded otherwise), reads
what they restated from their stored plans, and requests ranged runs for what the environment's versions now miss
within those spans, parents before readers across groups. What is still missing stays in the cursor until computed.
Its runs are a sensor's: they compute what is missing and never restate.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

import dagster as dg

from dagster_sparkmesh.dagster.restatement import RESTATED_READERS_TAG
from dagster_sparkmesh.dagster.sensor_planner import StatePlanner
from dagster_sparkmesh.dagster.sensor_requests import backfill_requests, runnable
from dagster_sparkmesh.dagster.specs import build_sparkmesh_specs, names_label
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.execution.plans import RUN_PLAN_PREFIX
from dagster_sparkmesh.plan.stored import decode
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.snapshot.intervals import merge
from dagster_sparkmesh.snapshot.records import Interval

RESTATED_BY_TAG = "sparkmesh/restated_by"


@dataclass(frozen=True)
class ReadersCursor:
    after: float = 0.0
    """Update time (epoch seconds) of the last restating run handled."""
    pending: dict[str, tuple[Interval, ...]] = field(default_factory=dict)
    """Restated spans per reader that may still be missing."""
    trigger: str = ""
    """The latest restating run: it starts the run keys."""

    @classmethod
    def parse(cls, text: str | None) -> ReadersCursor:
        if not text:
            return cls()
        data = json.loads(text)
        pending = {
            name: tuple(Interval(start=datetime.fromisoformat(s), end=datetime.fromisoformat(e)) for s, e in spans)
            for name, spans in data.get("pending", {}).items()
        }
        return cls(after=data.get("after", 0.0), pending=pending, trigger=data.get("trigger", ""))

    def dump(self) -> str:
        pending = {name: [[i.start.isoformat(), i.end.isoformat()] for i in spans] for name, spans in self.pending.items()}
        return json.dumps({"after": self.after, "pending": pending, "trigger": self.trigger})


def sparkmesh_restated_readers_sensor(
    *,
    environment: str,
    load_project: Callable[[], Project],
    planner: StatePlanner,
    translator: SparkMeshTranslator | None = None,
    target: dg.AssetSelection | None = None,
    select: Sequence[str] = (),
    exclude: Sequence[str] = (),
    minimum_interval_seconds: int = 30,
    default_status: dg.DefaultSensorStatus = dg.DefaultSensorStatus.RUNNING,
    namespace: str | None = None,
) -> dg.SensorDefinition:
    translator = translator or SparkMeshTranslator()

    @dg.sensor(
        name=f"sparkmesh_{names_label(environment, namespace)}_restated_readers",
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=default_status,
        asset_selection=target or dg.AssetSelection.all(),
        description=f"After a person's run restated models of `{environment}` (a Materialize of complete partitions), "
        "requests runs for their readers that run did not compute, so late data reaches every view.",
    )
    def _sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        cursor = ReadersCursor.parse(context.cursor)
        triggers = _restating_runs(context.instance, environment, cursor.after)
        if not triggers and not cursor.pending:
            return dg.SkipReason("no restatement left readers to compute")
        try:
            project = load_project()
        except SparkMeshError as error:
            return dg.SkipReason(f"the project does not load, no readers requested: {error}")
        pending = _with_restated(cursor.pending, project, planner, triggers)
        after = max([cursor.after, *(record.update_timestamp.timestamp() for record in triggers)])
        trigger = triggers[-1].dagster_run.run_id if triggers else cursor.trigger
        plan = planner.missing_within(project, pending)
        still = {name: pending[name] for name in plan.missing_intervals}
        specs = build_sparkmesh_specs(project, translator, environment, select=select, exclude=exclude, namespace=namespace)
        ready = runnable(project, plan, specs)
        tags = {"sparkmesh/environment": environment, RESTATED_BY_TAG: trigger}
        requests = backfill_requests(ready, specs, f"restated:{trigger}", tags)
        next_cursor = ReadersCursor(after, still, trigger).dump()
        if requests:
            return dg.SensorResult(run_requests=requests, cursor=next_cursor)
        waiting = ", ".join(sorted(still)[:5]) or "nothing"
        return dg.SensorResult(skip_reason=f"restated readers still to compute: {waiting}", cursor=next_cursor)

    return _sensor


def _restating_runs(instance: dg.DagsterInstance, environment: str, after: float) -> list:
    """Successful runs tagged as leaving restated readers in ``environment``, updated after ``after``, oldest first."""
    since = datetime.fromtimestamp(after, tz=timezone.utc) if after else None
    records = instance.get_run_records(
        filters=dg.RunsFilter(
            tags={RESTATED_READERS_TAG: environment}, statuses=[dg.DagsterRunStatus.SUCCESS], updated_after=since
        )
    )
    return sorted((r for r in records if r.update_timestamp.timestamp() > after), key=lambda r: r.update_timestamp)


def _with_restated(
    pending: dict[str, tuple[Interval, ...]], project: Project, planner: StatePlanner, triggers: list
) -> dict[str, tuple[Interval, ...]]:
    """``pending`` and the restatements of each triggering run's stored plan."""
    spans = {name: list(intervals) for name, intervals in pending.items()}
    for record in triggers:
        stored = planner.stored_plan(project, f"{RUN_PLAN_PREFIX}{record.dagster_run.run_id}")
        if stored is None:
            continue
        for name, span in decode(stored).restatements.items():
            spans.setdefault(name, []).append(span)
    return {name: tuple(merge(intervals)) for name, intervals in spans.items()}


__all__ = ["RESTATED_BY_TAG", "ReadersCursor", "sparkmesh_restated_readers_sensor"]
