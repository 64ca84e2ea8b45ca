"""Run a plan's standalone audits over the tables the plan leaves its models in (its ``StandaloneAudits`` stage,
after the backfill and before the promotion).

The tables are those the environment will read after the promotion (``Plan.tables``): the audit checks exactly
the data the promotion is about to expose. A blocking failure stops the promotion (no view, no environment record
changes, so the next plan runs the audit again); a non-blocking one is returned for the caller to report.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dagster_sparkmesh.errors import AuditFailure
from dagster_sparkmesh.execution.audits import evaluate_audit
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.results import AuditResult
from dagster_sparkmesh.model.standalone_audit import StandaloneAudit
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.project.checks.standalone_audits import render_standalone_audit


class StandaloneAuditFailure(AuditFailure):
    """Blocking standalone audits found offending rows; ``results`` holds every audit's result."""

    def __init__(self, message: str, results: Sequence[AuditResult], **where) -> None:
        super().__init__(message, **where)
        self.results = tuple(results)


def run_standalone_audits(ctx: ExecutionContext, plan: Plan, names: Iterable[str]) -> tuple[AuditResult, ...]:
    """The audits ``names`` (the plan's stage); raises when a blocking one fails."""
    results = evaluate_standalone_audits(ctx, plan, names)
    failed = [(ctx.project.standalone_audits[r.name], r) for r in results if r.blocking and not r.passed]
    if failed:
        raise _failure(failed, results)
    return results


def evaluate_standalone_audits(ctx: ExecutionContext, plan: Plan, names: Iterable[str]) -> tuple[AuditResult, ...]:
    """The results of the audits ``names`` over the plan's tables and window, without judging them."""
    tables = plan.tables(ctx.project.external_models)
    results = []
    for name in names:
        audit = ctx.project.standalone_audits.get(name)
        if audit is None:  # removed since the plan was built: nothing left to check
            continue
        query = render_standalone_audit(
            audit,
            start=plan.start,
            end=plan.end,
            execution_time=plan.execution_time,
            table_for=tables,
            models=ctx.project.models,
            variables=ctx.project.config.variables,
        )
        sample = {"sample_rows": audit.max_failing_rows} if audit.max_failing_rows else {}
        results.append(evaluate_audit(ctx, name, audit.blocking, query, **sample))
    return tuple(results)


def _failure(failed: list[tuple[StandaloneAudit, AuditResult]], results: Sequence[AuditResult]) -> StandaloneAuditFailure:
    audit, result = failed[0]
    names = ", ".join(f"{a.name} ({r.failing_rows} offending row(s))" for a, r in failed)
    return StandaloneAuditFailure(
        f"not promoting: blocking standalone audit{'s' if len(failed) > 1 else ''} failed: {names}",
        results,
        path=audit.path,
        line=audit.line,
        snippet=result.query,
        hint="the models were computed and their intervals recorded, but no view changed; fix the data (or the "
        "audit: blocking false only warns) and plan again",
    )
