"""A plan as readable plain text (the CLI may colour it): what changes, how, and what must be computed."""

from __future__ import annotations

from datetime import datetime

from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.snapshot.intervals import merge
from dagster_sparkmesh.snapshot.naming import PROD
from dagster_sparkmesh.snapshot.records import Interval

_INDENT = "    "


def format_plan(plan: Plan) -> str:
    lines = [_header(plan)]
    if not plan.has_changes:
        lines.append(f"No changes to plan: project files match the `{plan.environment}` environment")
    lines += _section("Added", [f"{name}" for name in plan.added])
    lines += _section("Removed", list(plan.removed))
    lines += _directly_modified(plan)
    lines += _section("Indirectly modified", [f"{n} ({_category(plan, n)})" for n in plan.indirectly_modified])
    lines += _section("Metadata only", list(plan.metadata_only))
    lines += _section("Restatements", [f"{n}: {_range(i)}" for n, i in plan.restatements.items()])
    lines += _section(PREVIEWS_TITLE, preview_lines(plan))
    lines += _missing(plan)
    lines += _section("Notes", list(plan.notes))
    lines += _section("Warnings", list(plan.warnings))
    return "\n".join(lines)


def _header(plan: Plan) -> str:
    head = f"Plan {plan.plan_id[:8]} for environment `{plan.environment}`"
    if plan.is_new_environment and plan.base_environment != plan.environment:
        head += f" (new, from `{plan.base_environment}`)"
    elif plan.is_new_environment:
        head += " (new)"
    return f"{head}: {_range(Interval(start=plan.start, end=plan.end))}"


def _section(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    return [f"{title}:"] + [f"{_INDENT}└── {item}" for item in items]


def _directly_modified(plan: Plan) -> list[str]:
    lines: list[str] = []
    for name in plan.directly_modified:
        change = plan.direct_changes[name]
        lines.append(f"{_INDENT}└── {name} ({change.category.value.replace('_', '-')})")
        lines += [f"{_INDENT * 2}{line}" for line in change.diff.splitlines()]
        lines += [f"{_INDENT * 2}! {column.describe()}" for column in change.destructive]
    return ["Directly modified:"] + lines if lines else []


PREVIEWS_TITLE = f"Forward-only previews (this environment only; {PROD} keeps its tables)"


def preview_label(plan: Plan, name: str) -> str:
    """``name (preview)`` for a model previewed on a table of its own, else the name."""
    return f"{name} (preview)" if name in plan.previews else name


def preview_lines(plan: Plan) -> list[str]:
    """One line per previewed model: its preview range and table."""
    return [
        f"{name} (preview): {_range(interval)} on {plan.physical_table_of(name)}"
        for name, interval in plan.previews.items()
    ]


def _missing(plan: Plan) -> list[str]:
    items = []
    for name, intervals in plan.missing_intervals.items():
        ranges = ", ".join(_range(r) for r in merge(intervals))
        count = f"{len(intervals)} interval{'s' if len(intervals) != 1 else ''}"
        items.append(f"{preview_label(plan, name)}: {ranges} ({count})")
    return _section("Missing intervals", items)


def _category(plan: Plan, name: str) -> str:
    category = plan.categories.get(name)
    return category.value.replace("_", "-") if category else "unknown"


def _range(interval: Interval) -> str:
    return f"[{_moment(interval.start)}, {_moment(interval.end)})"


def _moment(value: datetime) -> str:
    """Dates alone when at midnight, so daily ranges read as dates."""
    return f"{value:%Y-%m-%d}" if value.time() == datetime.min.time() else f"{value:%Y-%m-%d %H:%M}"
