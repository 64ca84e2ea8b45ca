"""A plan on the terminal: a rich tree of the changes (with coloured diffs), the explanation of what applying would
do, a progress bar while models run, and the metrics of the application.

Pure rendering: every function takes records (``Plan``, ``ApplyResult``, ...) and returns rich renderables or
text, so the commands stay thin and the output can be tested without Spark.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime

from rich.console import Console, Group, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from dagster_sparkmesh.execution.apply import ApplyResult
from dagster_sparkmesh.execution.promotion import view_changes
from dagster_sparkmesh.execution.results import AuditResult, ModelRunResult, ViewChange
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.plan.explain import PREVIEWS_TITLE, preview_label, preview_lines
from dagster_sparkmesh.snapshot.intervals import merge
from dagster_sparkmesh.snapshot.records import Environment, Interval

_DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan"}


def moment(value: datetime) -> str:
    """Dates alone when at midnight, so daily ranges read as dates."""
    return f"{value:%Y-%m-%d}" if value.time() == datetime.min.time() else f"{value:%Y-%m-%d %H:%M}"


def range_text(interval: Interval) -> str:
    return f"[{moment(interval.start)}, {moment(interval.end)})"


def category_text(plan: Plan, name: str) -> str:
    category = plan.categories.get(name)
    return category.value.replace("_", "-") if category else "unknown"


def plan_title(plan: Plan) -> str:
    title = f"Plan {plan.plan_id[:8]} for `{plan.environment}`"
    if plan.is_new_environment:
        title += f" (new, from `{plan.base_environment}`)" if plan.base_environment != plan.environment else " (new)"
    return f"{title}: {range_text(Interval(start=plan.start, end=plan.end))}"


def plan_tree(plan: Plan) -> Tree:
    """Added, removed, directly modified (with diff), indirectly modified, then the intervals to compute."""
    tree = Tree(Text(plan_title(plan), style="bold"))
    _branch(tree, "Added", [Text(name, style="green") for name in plan.added])
    _branch(tree, "Removed", [Text(name, style="red") for name in plan.removed])
    _direct_branch(tree, plan)
    _branch(tree, "Indirectly modified", [Text(f"{n} ({category_text(plan, n)})") for n in plan.indirectly_modified])
    _branch(tree, "Metadata only", [Text(name) for name in plan.metadata_only])
    if plan.effective_from is not None:
        _branch(tree, "Effective from", [Text(f"{moment(plan.effective_from)} (forward-only models recompute from it in prod)")])
    _branch(tree, "Restatements", [Text(f"{n}: {range_text(i)}") for n, i in plan.restatements.items()])
    _branch(tree, PREVIEWS_TITLE, [Text(line, style="cyan") for line in preview_lines(plan)])
    _branch(tree, "Missing intervals", [Text(line) for line in missing_interval_lines(plan)])
    _branch(tree, "Standalone audits", [Text(line) for line in standalone_audit_lines(plan)])
    _branch(tree, "Notes", [Text(note) for note in plan.notes])
    _branch(tree, "Warnings", [Text(warning, style="yellow") for warning in plan.warnings])
    return tree


def missing_interval_lines(plan: Plan) -> list[str]:
    """One line per model: its missing intervals joined into contiguous ranges."""
    lines = []
    for name, intervals in plan.missing_intervals.items():
        ranges = ", ".join(range_text(r) for r in merge(intervals))
        count = f"{len(intervals)} interval{'s' if len(intervals) != 1 else ''}"
        lines.append(f"{preview_label(plan, name)}: {ranges} ({count})")
    return lines


def diff_text(diff: str) -> Text:
    text = Text()
    for line in diff.splitlines():
        text.append(line + "\n", style=_DIFF_STYLES.get(line[:1], "") if not line.startswith(("+++", "---")) else "dim")
    text.rstrip()
    return text


def _branch(tree: Tree, title: str, items: list[Text]) -> None:
    if not items:
        return
    branch = tree.add(Text(title, style="bold"))
    for item in items:
        branch.add(item)


def _direct_branch(tree: Tree, plan: Plan) -> None:
    if not plan.directly_modified:
        return
    branch = tree.add(Text("Directly modified", style="bold"))
    for name in plan.directly_modified:
        change = plan.direct_changes[name]
        node = branch.add(Text(f"{name} ({change.category.value.replace('_', '-')})", style="yellow"))
        if change.diff:
            node.add(diff_text(change.diff))
        for column in change.destructive:
            node.add(Text(f"! {column.describe()}", style="red"))


def explain_steps(plan: Plan, current: Environment | None) -> list[str]:
    """What applying the plan would do, in order, without touching Spark (so views are compared by version)."""
    steps = []
    if plan.new_snapshots:
        steps.append(f"register {len(plan.new_snapshots)} new snapshot(s) in the state store")
    for name, interval in plan.restatements.items():
        steps.append(f"forget the recorded intervals of {name} over {range_text(interval)}")
    for name, intervals in plan.missing_intervals.items():
        table = plan.physical_table_of(name)
        ranges = ", ".join(range_text(r) for r in merge(intervals))
        steps.append(f"compute {preview_label(plan, name)} into {table}: {ranges}")
    for name in plan.standalone_audits:
        steps.append(f"run standalone audit {name} (a blocking failure stops here: no view changes)")
    # The views as the environment's record says (promotion also creates views missing from the catalog).
    for change in view_changes(plan, current, plan.environment):
        steps.append(f"{change.action} view {change.view}" + (f" -> {change.target}" if change.target else ""))
    if plan.has_changes or plan.missing_intervals:
        steps.append(f"record plan {plan.plan_id[:8]} as the `{plan.environment}` environment")
    return steps


def model_line(result: ModelRunResult) -> Text:
    if result.skipped:
        return Text(f"  {result.model}: up to date", style="dim")
    if result.kept:
        return Text(f"  {result.model}: inputs unchanged since its last write, table kept", style="dim")
    span = f" {range_text(result.range)}" if result.range else ""
    text = Text(f"  {result.model}:{span} {result.rows_written} rows in {result.duration_seconds:.1f} s")
    failed = result.failed_blocking_audits
    for audit in result.audits:
        style = "red" if audit in failed else ("yellow" if not audit.passed else "green")
        text.append(f"  audit {audit.name}: {'ok' if audit.passed else f'{audit.failing_rows} failing rows'}", style)
    for warning in result.warnings:
        text.append(f"\n    warning: {warning}", style="yellow")
    return text


def run_summary(computed: Sequence[ModelRunResult], models: Mapping[str, Model], seconds: float) -> str:
    """One line for a run. A FULL or VIEW model covers every interval of its range: counted with the incremental
    models' intervals, one new day of 30 models read as 1,290 intervals of work. So each kind of work is told apart:
    intervals of incremental models, models rebuilt whole, views (re-created only when their text changed), and FULL
    tables kept because their query and inputs had not changed."""
    work = [(_work(result, models[result.model]), result) for result in computed]
    counts = Counter(group for group, _ in work)
    intervals = sum(len(result.intervals) for group, result in work if group == "incremental")
    phrases = {
        "incremental": f"{intervals} interval(s) of {counts['incremental']} incremental model(s)",
        "rebuilt": f"{counts['rebuilt']} rebuilt whole",
        "views": f"{counts['views']} view(s)",
        "kept": f"{counts['kept']} FULL table(s) kept, their query and inputs unchanged",
    }
    parts = [phrase for group, phrase in phrases.items() if counts[group]] or ["nothing computed"]
    rows = sum(r.rows_written for r in computed)
    return f"Ran {len(computed)} model(s): {', '.join(parts)}; {rows} rows written in {seconds:.1f} s"


def _work(result: ModelRunResult, model: Model) -> str:
    if result.kept:
        return "kept"
    if model.kind.physical_is_view:
        return "views"
    return "rebuilt" if model.kind.rebuilt_each_run else "incremental"


@contextmanager
def model_progress(console: Console, total: int) -> Iterator[Callable[[ModelRunResult], None]]:
    """A progress bar over the models; yields the ``on_model_done`` callback (called from worker threads)."""
    progress = Progress(
        TextColumn("[bold]Evaluating models"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    task = progress.add_task("models", total=total)

    def on_model_done(result: ModelRunResult) -> None:
        progress.console.print(model_line(result), highlight=False)
        progress.advance(task)

    with progress:
        yield on_model_done


def apply_summary(result: ApplyResult) -> RenderableType:
    """Duration, intervals, rows written, models updated, then the views the promotion changed."""
    metrics = Table(show_header=False, box=None, padding=(0, 2))
    metrics.add_row("duration", f"{result.duration_seconds:.1f} s")
    metrics.add_row("intervals computed", str(result.intervals_processed))
    metrics.add_row("rows written", str(result.rows_written))
    metrics.add_row("models updated", str(sum(1 for m in result.models if not m.skipped)))
    parts: list[RenderableType] = [Text("Applied plan " + result.plan_id[:8], style="bold green"), metrics]
    if result.audits:
        parts.append(audits_text(result.audits))
    if any(not audit.passed for _, audit in result.external_audits):
        parts.append(external_audits_text(result.external_audits))
    views = result.promotion.views if result.promotion else ()
    parts.append(views_text(views, result.environment))
    return Group(*parts)


def standalone_audit_lines(plan: Plan) -> list[str]:
    """The standalone audits applying runs, and why: changed since the environment ran them, or new data."""
    changed = set(plan.changed_audits)
    return [f"{name} ({'new or changed' if name in changed else 'reads new data'})" for name in plan.standalone_audits]


def audits_text(audits: tuple[AuditResult, ...]) -> Text:
    """Standalone audit results: passed in green, a non-blocking failure in yellow (it only warns)."""
    text = Text("Standalone audits:")
    for audit in audits:
        outcome = "ok" if audit.passed else f"{audit.failing_rows} offending rows (non-blocking: a warning)"
        text.append(f"\n  {audit.name}: {outcome}", style="green" if audit.passed else "yellow")
    return text


def external_audits_text(audits: tuple[tuple[str, AuditResult], ...]) -> Text:
    """The non-blocking audits of external models that found rows (a blocking one stops the plan instead)."""
    text = Text("Audits of external models:")
    for external, audit in audits:
        if not audit.passed:
            text.append(f"\n  {external}: {audit.name}: {audit.failing_rows} offending rows (non-blocking: a warning)",
                        style="yellow")
    return text


def views_text(views: tuple[ViewChange, ...] | list[ViewChange], environment: str) -> Text:
    if not views:
        return Text(f"No view of `{environment}` changed")
    text = Text(f"Views of `{environment}` updated ({len(views)}):")
    for change in views:
        text.append(f"\n  {change.action} {change.view}" + (f" -> {change.target}" if change.target else ""))
    return text
