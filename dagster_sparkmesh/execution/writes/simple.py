"""Kinds with nothing to compute per interval: a VIEW (its query as a view) and a SEED (its CSV file loaded)."""

from __future__ import annotations

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.writes.commit import commit
from dagster_sparkmesh.execution.writes.queries import select_for
from dagster_sparkmesh.execution.writes.records import WriteResult


def write_view(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    ctx.engine.catalog.ensure_view(target.table, select_for(ctx, target, target.span))  # unchanged text: no metastore update
    return WriteResult.of(0, commit(ctx, target, target.intervals))


def write_seed(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    from dagster_sparkmesh.project.seeds import read_seed

    seed_path = (target.model.path.parent / target.model.kind.path).resolve()
    seed = read_seed(seed_path, target.model.columns, target.model.kind.csv_settings)
    ctx.engine.load_seed(target.table, seed.columns, seed.rows)
    return WriteResult.of(len(seed.rows), commit(ctx, target, target.intervals))
