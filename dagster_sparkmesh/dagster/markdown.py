"""The plan and the work of a step as Markdown metadata, so that the Dagster UI shows what the CLI prints: the
promotion's model changes with their diffs, and one table of a ranged step's models, windows, rows and durations."""

from __future__ import annotations

from collections.abc import Sequence

from dagster_sparkmesh.execution.results import ModelRunResult
from dagster_sparkmesh.plan.definition import Plan

_MAX_DIFF_LINES = 200  # a reformatted 2,000-line model must not make a metadata entry of megabytes


def changes_markdown(plan: Plan) -> str:
    """Added, removed, directly modified (category and diff), indirectly modified and metadata-only models."""
    parts: list[str] = []
    for title, names in (("Added", plan.added), ("Removed", plan.removed)):
        if names:
            parts.append(f"**{title}**: " + ", ".join(f"`{name}`" for name in names))
    for name in plan.directly_modified:
        change = plan.direct_changes.get(name)
        category = change.category.value.replace("_", "-") if change else "unknown"
        parts.append(f"**Directly modified** `{name}` ({category})")
        if change and change.diff:
            parts.append(f"```diff\n{_clipped(change.diff)}\n```")
    for title, names in (("Indirectly modified", plan.indirectly_modified), ("Metadata only", plan.metadata_only)):
        if names:
            parts.append(f"**{title}**: " + ", ".join(f"`{name}`" for name in names))
    return "\n\n".join(parts) or "no model changed"


def plan_markdown(plan: Plan) -> str:
    """The whole plan for a reader deciding whether to let it run: the changes with their diffs, restatements,
    what each model will compute, and how many models stay untouched."""
    parts = [f"Plan `{plan.plan_id}` of `{plan.environment}`", changes_markdown(plan)]
    if plan.restatements:
        parts.append("**Restated**: " + ", ".join(f"`{n}` {_span(i.start, i.end)}" for n, i in plan.restatements.items()))
    if plan.missing_intervals:
        rows = [
            f"| `{name}` | {len(intervals)} | {_span(intervals[0].start, intervals[-1].end)} |"
            for name, intervals in sorted(plan.missing_intervals.items())
        ]
        parts.append("**To compute**\n\n| model | intervals | from → to |\n|---|---|---|\n" + "\n".join(rows))
    else:
        parts.append("**To compute**: nothing (every interval exists already)")
    touched = set(plan.missing_intervals) | set(plan.added) | set(plan.directly_modified) | set(plan.indirectly_modified)
    untouched = len(plan.environment_after.snapshots) - len(touched & {s.name for s in plan.environment_after.snapshots})
    parts.append(f"**Untouched**: {untouched} model(s) keep their tables and views")
    parts += [f"> note: {note}" for note in plan.notes] + [f"> warning: {warning}" for warning in plan.warnings]
    return "\n\n".join(parts)


def step_table(results: Sequence[ModelRunResult]) -> str:
    """One row per model the step ran: its window, intervals, rows written and duration."""
    rows = [
        f"| `{r.model}` | {_window(r)} | {len(r.intervals)} | {r.rows_written:,} | {r.duration_seconds:.2f} s | {_outcome(r)} |"
        for r in results
    ]
    header = "| model | window | intervals | rows written | duration | outcome |\n|---|---|---|---|---|---|"
    return "\n".join([header, *rows])


def _window(result: ModelRunResult) -> str:
    interval = result.range
    if interval is None:
        return "-"
    return _span(interval.start, interval.end)


def _outcome(result: ModelRunResult) -> str:
    if result.failed_blocking_audits:
        return "blocking audit failed"
    if result.skipped and not result.not_ready:
        return "up to date"
    if result.kept:
        return "kept: inputs unchanged"
    if result.incomplete or result.not_ready:
        return "left intervals missing"
    return "computed"


def _span(start, end) -> str:
    return f"{start:%Y-%m-%d %H:%M} → {end:%Y-%m-%d %H:%M}".replace(" 00:00", "")


def _clipped(diff: str) -> str:
    lines = diff.splitlines()
    if len(lines) <= _MAX_DIFF_LINES:
        return diff
    return "\n".join([*lines[:_MAX_DIFF_LINES], f"... {len(lines) - _MAX_DIFF_LINES} more lines (sparkmesh plan shows all)"])
