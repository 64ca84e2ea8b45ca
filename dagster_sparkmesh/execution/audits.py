"""Run a model's audits against its physical table (and any rendered audit query): count offending rows and keep a
small sample."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.results import AuditResult
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.model.table_formats import lakehouse_format
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.snapshot.naming import quote

SAMPLE_ROWS = 5
_EPOCH = datetime(1970, 1, 1)


def run_audits(
    ctx: ExecutionContext, model: Model, table: str, written: Interval | None = None, counted: Mapping[int, int] = {},
    table_for: Callable[[str], str] | None = None,
) -> list[AuditResult]:
    """The model's audits over its table; over only the ``written`` interval for a model with a time column, as
    SQLMesh audits an incremental model's new data (a daily run then reads one day, not the whole history).
    ``counted``: audit position → offending rows, as the write counted them (``execution.row_checks``): not
    counted again (the table is read only for a sample of the offending rows). ``table_for``: the tables of the
    models a custom audit names (``ModelTarget.table_lookup``)."""
    if not model.audits:
        return []
    from dagster_sparkmesh.model.builtin_audits import render_audit_query

    audited = quote(table)
    if written is not None and model.kind.has_time_column:
        audited = _rows_of_interval(ctx, model, table, written)
    results = []
    times = _time_values(ctx, written)
    for position, call in enumerate(model.audits):
        query = render_audit_query(call, audited, ctx.project.audits_for(model.name), model.name, table_for, times)
        failing = counted.get(position)
        results.append(evaluate_audit(ctx, call.name, _is_blocking(ctx, model, call), query, failing=failing))
    return results


def _time_values(ctx: ExecutionContext, written: Interval | None) -> dict:
    """The time macros an audit may use: the written interval's and the execution time's (without an interval, as
    SQLMesh renders a table's audit, the interval is empty at the epoch)."""
    from dagster_sparkmesh.project.rendering import time_macro_values

    start, end = (written.start, written.end) if written is not None else (_EPOCH, _EPOCH + timedelta(microseconds=1))
    return time_macro_values(start, end, ctx.clock())


def evaluate_audit(
    ctx: ExecutionContext, name: str, blocking: bool, query: str, sample_rows: int = SAMPLE_ROWS,
    failing: int | None = None,
) -> AuditResult:
    """Run an audit's rendered query: count the offending rows (unless ``failing`` says how many there are), and
    keep ``sample_rows`` of them to show."""
    if failing is None:
        failing = int(ctx.engine.catalog.query_rows(f"SELECT COUNT(*) FROM ({query}) AS offending")[0][0])
    sample: tuple[tuple[str, ...], ...] = ()
    if failing:
        rows = ctx.engine.catalog.query_rows(f"SELECT * FROM ({query}) AS offending LIMIT {int(sample_rows)}")
        sample = tuple(tuple(str(value) for value in row) for row in rows)
    return AuditResult(name=name, blocking=blocking, failing_rows=failing, sample=sample, query=query)


def _rows_of_interval(ctx: ExecutionContext, model: Model, table: str, written: Interval) -> str:
    kind = model.kind
    window = TimeWindow(kind.time_column, written.start, written.end, kind.time_column_format)  # type: ignore[attr-defined]
    return f"(SELECT * FROM {quote(table)} WHERE {window.predicate(_time_column_type(ctx, model, table, window.column))})"


def _time_column_type(ctx: ExecutionContext, model: Model, table: str, column: str) -> str:
    """The time column's type: a period table's layout, which the engine knows once it wrote the table (no catalog
    round trip), else the catalog's (a lakehouse table is never a period table: ``model.table_formats``)."""
    layout = ctx.engine.period_layout(table) if lakehouse_format(model) is None else None
    columns = layout.columns if layout is not None else ctx.engine.catalog.columns(table)
    return {name.lower(): data_type for name, data_type in columns}[column.lower()]


def _is_blocking(ctx: ExecutionContext, model: Model, call) -> bool:
    custom = ctx.project.audits_for(model.name).get(call.base_name)
    if custom is not None and not call.name.endswith("_non_blocking"):
        return custom.blocking
    return call.blocking
