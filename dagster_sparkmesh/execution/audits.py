"""Run a model's audits against its physical table (and any rendered audit query): count offending rows and keep a
small sample."""

from __future__ import annotations

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.results import AuditResult
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.snapshot.naming import quote

SAMPLE_ROWS = 5


def run_audits(ctx: ExecutionContext, model: Model, table: str) -> list[AuditResult]:
    if not model.audits:
        return []
    from dagster_sparkmesh.model.builtin_audits import render_audit_query

    results = []
    for call in model.audits:
        query = render_audit_query(call, quote(table), ctx.project.audits)
        results.append(evaluate_audit(ctx, call.name, _is_blocking(ctx, call), query))
    return results


def evaluate_audit(
    ctx: ExecutionContext, name: str, blocking: bool, query: str, sample_rows: int = SAMPLE_ROWS
) -> AuditResult:
    """Run an audit's rendered query: count the offending rows, and keep ``sample_rows`` of them to show."""
    failing = int(ctx.engine.query_rows(f"SELECT COUNT(*) FROM ({query}) AS offending")[0][0])
    sample: tuple[tuple[str, ...], ...] = ()
    if failing:
        rows = ctx.engine.query_rows(f"SELECT * FROM ({query}) AS offending LIMIT {int(sample_rows)}")
        sample = tuple(tuple(str(value) for value in row) for row in rows)
    return AuditResult(name=name, blocking=blocking, failing_rows=failing, sample=sample, query=query)


def _is_blocking(ctx: ExecutionContext, call) -> bool:
    custom = ctx.project.audits.get(call.base_name)
    if custom is not None and not call.name.endswith("_non_blocking"):
        return custom.blocking
    return call.blocking
