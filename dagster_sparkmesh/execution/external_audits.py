"""Audits of external models (``audits:`` in ``external_models.yaml``), run before the models that read them.

An external table is nobody's output here, so there is no write to audit after: its audits check the inputs of a
plan instead. A blocking failure refuses the plan before anything is written (as the preflight does for a missing
external table); a non-blocking one is returned for the caller to report.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from dagster_sparkmesh.errors import AuditFailure
from dagster_sparkmesh.execution.audits import run_audits
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.results import AuditResult
from dagster_sparkmesh.model.records import ExternalModel


class ExternalAuditFailure(AuditFailure):
    """A blocking audit of an external model found offending rows: the plan's readers of it are not computed."""


def audit_externals(
    ctx: ExecutionContext, readers: Mapping[str, Collection[str]]
) -> tuple[tuple[str, AuditResult], ...]:
    """Run the audits of the external models in ``readers`` (external name → the models to compute that read it);
    raise on the first blocking failure, else return every (external name, result) (the non-blocking failures are
    the caller's to report)."""
    externals = ctx.project.external_models
    results = []
    for name in sorted(readers):
        external = externals.get(name)
        if external is None or not external.audits:
            continue
        audits = run_audits(ctx, external, name)  # type: ignore[arg-type]  # it reads only .audits
        failed = [audit for audit in audits if audit.blocking and not audit.passed]
        if failed:
            raise _failure(external, failed[0], sorted(readers[name]))
        results += [(name, audit) for audit in audits]
    return tuple(results)


def _failure(external: ExternalModel, audit: AuditResult, readers: list[str]) -> ExternalAuditFailure:
    return ExternalAuditFailure(
        f"external model {external.name}: blocking audit {audit.name} found {audit.failing_rows} offending row(s); "
        f"read by {', '.join(readers)}",
        path=external.path,
        line=external.line,
        snippet=audit.query,
        hint="fix the external table's data (or make the audit non-blocking: "
        f"{audit.name.removesuffix('_non_blocking')}_non_blocking); nothing was written",
    )
