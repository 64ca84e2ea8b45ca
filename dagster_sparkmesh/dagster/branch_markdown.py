"""A branch environment's comparison with prod as Markdown: the numbers a reviewer reads before merging (rows,
the statistics of every column that changed, rows matched by key that differ, a sample of them)."""

from __future__ import annotations

from collections.abc import Sequence

from dagster_sparkmesh.engine.table_diff import TableDiff
from dagster_sparkmesh.engine.table_profiles import ColumnStatistics
from dagster_sparkmesh.execution.branch_environments import ModelComparison
from dagster_sparkmesh.execution.results import AuditResult

_STATISTICS = ("type", "nulls", "distinct", "minimum", "maximum", "total")
_LONGEST = 60  # characters of a value shown in a cell


def audits_markdown(audits: Sequence[tuple[str, AuditResult]]) -> str:
    if not audits:
        return "No audit ran (no changed model has one)."
    rows = [
        f"| `{model}` | {audit.name} | {'passed' if audit.passed else f'{audit.failing_rows:,} failing row(s)'} | "
        f"{'blocking' if audit.blocking else 'warning'} |"
        for model, audit in audits
    ]
    return "| model | audit | result | kind |\n|---|---|---|---|\n" + "\n".join(rows)


def comparisons_markdown(comparisons: Sequence[ModelComparison]) -> str:
    if not comparisons:
        return "No model with a table changed: the branch's environment reads prod's tables only."
    return "\n\n".join(_comparison(c) for c in comparisons)


def _comparison(comparison: ModelComparison) -> str:
    prod_rows = "-" if comparison.prod is None else f"{comparison.prod.rows:,}"
    parts = [
        f"### `{comparison.model}`",
        f"| | prod | branch |\n|---|---:|---:|\n| rows | {prod_rows} | {comparison.branch.rows:,} |",
    ]
    changed = comparison.changed_columns
    if comparison.prod is None:
        parts.append("New in the branch: prod has no table of this model.")
    elif not changed:
        parts.append("Every column's statistics are the same as prod's.")
    if changed:
        parts.append(_statistics_table(comparison, changed))
    if comparison.keyed is not None:
        parts.append(_keyed(comparison.keyed))
    return "\n\n".join(parts)


def _statistics_table(comparison: ModelComparison, changed: Sequence[str]) -> str:
    rows = []
    for column in changed:
        after = comparison.branch.column(column)
        before = comparison.prod.column(column) if comparison.prod is not None else None
        for statistic in _STATISTICS:
            old, new = _value(before, statistic), _value(after, statistic)
            if old != new:
                rows.append(f"| {code(column)} | {statistic} | {old} | {new} |")
    removed = [c.column for c in comparison.prod.columns if comparison.branch.column(c.column) is None] if comparison.prod else []
    rows += [f"| {code(column)} | (removed) | present | - |" for column in removed]
    return "**Changed columns**\n\n| column | statistic | prod | branch |\n|---|---|---:|---:|\n" + "\n".join(rows)


def _value(statistics: ColumnStatistics | None, name: str) -> str:
    if statistics is None:
        return "-"
    value = getattr(statistics, name)
    return "null" if value is None else cell(str(value))


def cell(text: str) -> str:
    """A value as one Markdown table cell: one line, cut to length, pipes and backquotes escaped."""
    line = " ".join(text.split())
    line = line if len(line) <= _LONGEST else line[:_LONGEST - 1] + "…"
    return line.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")


def code(name: str) -> str:
    """A name as inline code (a column named with a backquote keeps its code span whole)."""
    return f"`` {name} ``" if "`" in name else f"`{name}`"


def _keyed(diff: TableDiff) -> str:
    keys = ", ".join(f"`{k}`" for k in diff.keys)
    parts = [
        f"**Rows joined on {keys}**: {diff.matched:,} in both, {diff.only_in_source:,} only in prod, "
        f"{diff.only_in_target:,} only in the branch",
    ]
    differing = [(column, count) for column, count in diff.mismatches if count]
    if differing:
        parts.append("| column | rows that differ |\n|---|---:|\n" + "\n".join(f"| {code(c)} | {n:,} |" for c, n in differing))
    if diff.sample:
        header = [cell(h.replace("(source)", "(prod)").replace("(target)", "(branch)")) for h in diff.sample_header]
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in diff.sample]
        parts.append("**Sample of rows that differ**\n\n" + "\n".join(lines))
    return "\n\n".join(parts)
