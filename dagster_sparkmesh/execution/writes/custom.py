"""CUSTOM: the model's materialization class writes each batch of missing intervals through the Spark adapter.

As SQLMesh calls it: ``insert`` once per batch (``batch_size`` intervals, all of them without one), with the batch's
query, the model, whether the table holds nothing of this version yet (``is_first_insert``) and the batch's
interval as ``render_kwargs``. Each batch is recorded after it was written and audited, like every kind's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import sqlglot
from sqlglot.errors import SqlglotError

from dagster_sparkmesh.errors import ExecutionError, SparkMeshError
from dagster_sparkmesh.execution.abort import StopRequested
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.engine.lakehouse import require_format_served
from dagster_sparkmesh.execution.writes.custom_adapter import SparkMaterializationAdapter, TableSettings
from dagster_sparkmesh.execution.model_target import ModelTarget
from dagster_sparkmesh.execution.writes.commit import commit
from dagster_sparkmesh.execution.writes.queries import select_for
from dagster_sparkmesh.execution.writes.records import WriteResult
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.model.table_formats import lakehouse_format
from dagster_sparkmesh.plan.intervals import batches, interval_unit_name
from dagster_sparkmesh.project.materializations import Materialization, load_materializations, materialization_of
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.sqlmesh_api.materializations import MaterializedModel
from dagster_sparkmesh.sqlmesh_api.node import IntervalUnit
from dagster_sparkmesh.user_exit import ExitCalled, exit_error, exits_refused


def write_custom(ctx: ExecutionContext, target: ModelTarget) -> WriteResult:
    model = target.model
    materialization = materialization_of(model, load_materializations(_project_root(ctx, model)))
    handed = _handed_model(model, materialization)
    rows, result, incomplete = 0, WriteResult(), []
    # Asked once: after this step's first batch the table holds rows of this version.
    first = not ctx.engine.catalog.table_exists(target.table) or not ctx.state.get_intervals(model.name, target.version)
    for number, batch in enumerate(batches(list(target.intervals), model.kind.batch_size)):
        if number and target.should_stop():
            raise StopRequested(model.name)
        unit_intervals = tuple(i for i in target.intervals if batch.start <= i.start and i.end <= batch.end)
        with ctx.state.table_write_lock(target.table):
            rows += _insert(ctx, target, materialization, handed, batch, first and not number)
        committed = commit(ctx, target, unit_intervals)
        incomplete += committed.incomplete
        result = WriteResult(rows=rows, audits=committed.audits, incomplete=tuple(incomplete))
    return result


def _insert(
    ctx: ExecutionContext, target: ModelTarget, materialization: Materialization, handed: MaterializedModel,
    batch: Interval, first: bool,
) -> int:
    query = select_for(ctx, target, batch)
    adapter = SparkMaterializationAdapter(ctx, _table_settings(ctx, target.model))
    what = f"custom materialization {materialization.name!r} of model {target.model.name}"
    try:
        with exits_refused():
            materialization.implementation(adapter).insert(
                table_name=target.table, query_or_df=_expression(query), model=handed, is_first_insert=first,
                render_kwargs=_render_kwargs(ctx, batch),
            )
    except (SystemExit, ExitCalled) as error:
        raise exit_error(error, what, kind=ExecutionError) from None
    except SparkMeshError:
        raise
    except Exception as error:  # the user's class: report it as their error, with the model's file
        raise ExecutionError(f"{what} raised {type(error).__name__}: {error}", path=target.model.path,
                             line=target.model.line, hint="fix the class's insert()") from error
    if not ctx.engine.catalog.table_exists(target.table):
        raise ExecutionError(f"{what} wrote no table {target.table}", path=target.model.path, line=target.model.line,
                             hint="insert() must write table_name (e.g. self._replace_query_for_model or adapter.insert_append)")
    return adapter.rows


def _expression(query: str) -> Any:
    """The query as SQLMesh hands it over (a sqlglot expression); its text when sqlglot cannot read it back."""
    try:
        return sqlglot.parse_one(query, read="spark")
    except SqlglotError:
        return query


def _render_kwargs(ctx: ExecutionContext, batch: Interval) -> dict[str, Any]:
    return {"start": batch.start, "end": batch.end, "execution_time": ctx.clock()}


def _table_settings(ctx: ExecutionContext, model: Model) -> TableSettings:
    """How the class's tables are made: the model's partitions, and its lakehouse format (which the session must
    serve: refused before the class runs) with its physical properties."""
    table_format = lakehouse_format(model)
    if table_format is not None:
        require_format_served(ctx.engine.catalog.spark.conf, table_format, model.catalog)
    return TableSettings(tuple(model.partitioned_by), table_format, dict(model.physical_properties) if table_format else {})


def _handed_model(model: Model, materialization: Materialization) -> MaterializedModel:
    kind = materialization.kind_type(
        materialization=model.kind.materialization, materialization_properties=model.kind.properties(),
        batch_size=model.kind.batch_size, lookback=model.kind.lookback, forward_only=model.kind.forward_only,
    )
    settings = {
        "partitioned_by": list(model.partitioned_by), "clustered_by": list(getattr(model, "clustered_by", ()) or ()),
        "physical_properties": dict(getattr(model, "physical_properties", ()) or {}),
        "description": model.description, "column_descriptions": dict(model.column_descriptions or {}),
        "owner": model.owner, "tags": list(model.tags), "cron": model.cron, "start": model.start,
        "cron_tz": ZoneInfo(model.cron_tz) if model.cron_tz else None,
        "interval_unit": IntervalUnit(interval_unit_name(model)), "table_format": model.table_format, "storage_format": model.storage_format,
    }
    return MaterializedModel(name=model.name, kind=kind, columns=tuple(model.columns), settings=settings)


def _project_root(ctx: ExecutionContext, model: Model) -> Path:
    """The repository the model's file belongs to (a project of several repositories: each its own folder)."""
    for folder in model.path.parents:
        if folder == ctx.project.path or any((folder / name).is_file() for name in ("config.yaml", "config.yml", "config.py")):
            return folder
    return ctx.project.path
