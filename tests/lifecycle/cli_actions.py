"""What a user does to the lifecycle project, as one object: CLI commands run in-process on the shared Spark
session, Dagster-style ranged runs through the package API, file edits, and the oracle's verdict.

CLI commands use the real clock (they always pass ``--end``, so it never matters); API calls use ``CLOCK``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from dagster_sparkmesh.execution.apply import backfill_window
from dagster_sparkmesh.execution.plans import Restate, plan_for_run
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.janitor import JanitorReport, run_janitor
from dagster_sparkmesh.execution.results import ModelRunResult
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.naming import view_name
from dagster_sparkmesh.state.store import open_state_store
from tests.cli.sparkmesh_harness import invoke
from tests.lifecycle.oracle import Divergence, compare_with_fresh_build
from tests.lifecycle.oracle import digest_view, drop_schemas
from tests.lifecycle.project import (
    PARTITIONED,
    LifecycleProject,
    ProjectSpec,
    create_external_table,
    write_project,
    write_spec,
)

CLOCK = datetime(2024, 3, 1)


@dataclass(frozen=True)
class CommandResult:
    exit_code: int
    output: str


def day(text: str) -> datetime:
    return datetime.combine(date.fromisoformat(text), datetime.min.time())


def inclusive_end(text: str) -> datetime:
    """``--end 2024-01-10`` includes that day: the exclusive end is the next midnight."""
    return day(text) + timedelta(days=1)


@dataclass
class Lifecycle:
    project: LifecycleProject
    engine: object
    workdir: Path
    spec: ProjectSpec = field(default_factory=ProjectSpec)

    # --- the CLI ---------------------------------------------------------------------------------------------
    def cli(self, *args: str) -> CommandResult:
        result, _ = invoke(self.project.path, list(args), self.engine)
        return CommandResult(exit_code=result.exit_code, output=result.output)

    def plan(self, *args: str, environment: str = "prod") -> CommandResult:
        """``sparkmesh plan ENV --auto-apply ARGS``; model names in ARGS may omit the prefix (``--restate-model
        src.events``)."""
        named = [self.project.name(a) if a in _model_names() else a for a in args]
        return self.cli("plan", environment, "--auto-apply", "--no-prompts", *named)

    # --- the package API, as a Dagster step calls it ---------------------------------------------------------
    def context(self, environment: str = "prod", clock: datetime = CLOCK) -> ExecutionContext:
        return ExecutionContext(
            project=load_project(self.project.path, use_cache=False),
            state=open_state_store(None, self.project.path),
            environment=environment,
            engine_factory=lambda: self.engine,
            clock=lambda: clock,
        )

    def run_models(
        self, models: list[str] | None, start: datetime, end: datetime, *, restate: bool = False
    ) -> list[ModelRunResult]:
        """A ranged Dagster run of ``models`` (unprefixed) over [start, end), as ``dagster/assets.py`` calls it;
        ``restate``: a person's "Materialize" in the UI, which recomputes complete partitions too. As in Dagster,
        a partition range restates the time-partitioned models of the selection only (the others are assets of
        their own, without partitions, in runs of their own)."""
        ctx = self.context()
        try:
            names = None if models is None else [self.project.name(m) for m in models]
            partitioned = {self.project.name(m) for m in PARTITIONED}
            chosen = tuple(sorted(n for n in (names or ctx.project.models) if n in partitioned))
            recompute = Restate(chosen, start, end) if restate else None
            plan = plan_for_run(ctx, None, uuid.uuid4().hex, recompute)  # a run launched from the UI: no plan tag
            return list(backfill_window(ctx, plan, names, start, end).models)
        finally:
            ctx.close()

    def janitor(self, clock: datetime) -> JanitorReport:
        ctx = self.context(clock=clock)
        try:
            return run_janitor(ctx)
        finally:
            ctx.close()

    # --- files and data --------------------------------------------------------------------------------------
    def edit(self, spec: ProjectSpec) -> None:
        self.spec = spec
        write_spec(self.project, spec)

    def rows(self, model: str, columns: str, environment: str = "prod") -> list[tuple]:
        """``columns`` of ``model``'s view, ordered by them (incremental views put the time column last)."""
        name = view_name(self.project.name(model), environment)
        query = f"SELECT {columns} FROM {name} ORDER BY {columns}"
        return [tuple(r) for r in self.engine.spark.sql(query).collect()]

    def unreadable_views(self) -> dict[str, str]:
        """Every view of every environment of the project whose query fails, with the error."""
        failing = {}
        with open_state_store(None, self.project.path) as state:
            environments = state.list_environments()
        for environment in environments:
            for snapshot in environment.view_snapshots:
                name = view_name(snapshot.name, environment.name)
                digest = digest_view(self.engine, name)
                if isinstance(digest, str):
                    failing[name] = digest
        return failing

    def divergences(self, end: datetime, start: datetime | None = None, environment: str = "prod") -> list[Divergence]:
        return compare_with_fresh_build(
            self.engine, self.project.path, self.project.prefix, self.workdir, end=end, start=start, environment=environment
        )


def open_lifecycle(engine, workdir: Path) -> Lifecycle:
    """A new copy of the project in ``workdir/project`` under fresh schema prefixes, its external table created."""
    import uuid

    project = write_project(workdir / "project", f"l{uuid.uuid4().hex[:8]}_", f"x{uuid.uuid4().hex[:8]}_ext")
    create_external_table(engine, project)
    return Lifecycle(project=project, engine=engine, workdir=workdir)


def close_lifecycle(lifecycle: Lifecycle) -> None:
    """Drop every schema of the project (its views, physical tables and external table)."""
    drop_schemas(lifecycle.engine, [lifecycle.project.prefix, lifecycle.project.external_schema])


def _model_names() -> set[str]:
    from tests.lifecycle.project import MODELS

    return set(MODELS)


def describe(divergences: list[Divergence]) -> str:
    return "\n".join(d.describe() for d in divergences)
