"""Execution results as Dagster events: a MaterializeResult per model, an AssetCheckResult per audit."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import dagster as dg

from dagster_sparkmesh.execution.results import AuditResult, ModelRunResult


def materialize_result(
    result: ModelRunResult,
    key: dg.AssetKey,
    *,
    row_count: int | None = None,
) -> dg.MaterializeResult:
    """The event of a computed model. In a ranged run Dagster copies it onto every partition of the range, so it
    holds only what is true of each: rows per partition and the range's total are added per partition
    (``StepReport``). ``row_count``: the rows of an unpartitioned table."""
    metadata: dict[str, Any] = {
        "sparkmesh/version": result.version,
        "sparkmesh/physical_table": result.physical_table,
        "sparkmesh/duration_seconds": result.duration_seconds,
        "sparkmesh/intervals": len(result.intervals),
    }
    if row_count is not None:
        metadata["dagster/row_count"] = row_count
    interval = result.range
    if interval is not None:
        metadata["sparkmesh/range"] = f"[{interval.start.isoformat()}, {interval.end.isoformat()})"
    return dg.MaterializeResult(asset_key=key, metadata=metadata)


def check_results(
    audits: Sequence[AuditResult],
    check_keys: Sequence[dg.AssetCheckKey],
    selected: set[dg.AssetCheckKey],
) -> Iterator[dg.AssetCheckResult]:
    """One result per selected check; audits come back in the order of the model's audit calls."""
    for audit, key in zip(audits, check_keys):
        if key in selected:
            yield check_result(audit, key)


def check_result(audit: AuditResult, key: dg.AssetCheckKey, note: str | None = None) -> dg.AssetCheckResult:
    metadata: dict[str, Any] = {"failing_rows": audit.failing_rows, "query": dg.MetadataValue.md(f"```sql\n{audit.query}\n```")}
    if note:
        metadata["sparkmesh/evaluated_on"] = note
    if audit.sample:
        metadata["sample"] = dg.MetadataValue.md(_rows_as_markdown(audit.sample))
    return dg.AssetCheckResult(
        asset_key=key.asset_key,
        check_name=key.name,
        passed=audit.passed,
        severity=dg.AssetCheckSeverity.ERROR if audit.blocking else dg.AssetCheckSeverity.WARN,
        metadata=metadata,
    )


def _rows_as_markdown(rows: Sequence[Sequence[str]]) -> str:
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)
