"""Read-only project commands: ``info``, ``render``, ``dag``, and ``clean`` (which never loads the project).

Each command is a thin shell over a pure function of the loaded ``Project`` (``info_payload``, ``dag_levels``,
``dot_graph``, ``render_model_sql``, ``clean_project``), so the functions can be tested and reused without click.
"""

from __future__ import annotations

import difflib
import json
import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from dagster_sparkmesh.cli.context import CliContext, pass_cli_context
from dagster_sparkmesh.cli.time_arguments import execution_time_from_option, interval_from_options
from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.project.config import state_dir
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.project.rendering import physical_tables, render_query
from dagster_sparkmesh.snapshot.naming import with_default_schema

# Generated caches only: the state store (.sparkmesh/state.db) and the warehouse hold data and are never touched.
CACHE_FOLDERS = ("cache",)


def info_payload(project: Project) -> dict[str, dict[str, dict[str, object]]]:
    payload: dict[str, dict[str, dict[str, object]]] = {
        "models": {
            name: {"kind": model.kind_name, "fingerprint": model.fingerprint, "depends_on": sorted(model.depends_on)}
            for name, model in project.models.items()
        }
    }
    if project.standalone_audits:
        payload["standalone_audits"] = {
            name: {"fingerprint": audit.fingerprint, "depends_on": sorted(audit.depends_on), "blocking": audit.blocking,
                   "skip": audit.skip}
            for name, audit in project.standalone_audits.items()
        }
    return payload


def dag_levels(project: Project) -> list[list[str]]:
    """Models grouped by depth: level 0 reads no model, level n reads at least one model of level n-1."""
    depth: dict[str, int] = {}
    for name, model in project.models.items():  # topological order: parents come first
        depth[name] = 1 + max((depth[parent] for parent in model.depends_on if parent in depth), default=-1)
    levels: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for name, level in depth.items():
        levels[level].append(name)
    return [sorted(level) for level in levels]


def dot_graph(project: Project) -> str:
    lines = ["digraph sparkmesh {", "  rankdir=LR;", "  node [shape=box];"]
    for name in sorted(project.external_models):
        lines.append(f'  "{name}" [shape=ellipse, style=dashed];')
    for name, model in project.models.items():
        lines.append(f'  "{name}" [label="{name}\\n{model.kind_name}"];')
    for name, model in project.models.items():
        lines.extend(f'  "{parent}" -> "{name}";' for parent in sorted(model.depends_on))
    lines.append("}")
    return "\n".join(lines)


def find_model(project: Project, name: str) -> Model:
    model = project.models.get(with_default_schema(name.lower()))
    if model is not None:
        return model
    close = difflib.get_close_matches(name.lower(), project.models, n=3)
    raise ProjectError(
        f"no model named {name!r} in the project",
        path=project.path,
        hint=f"did you mean {', '.join(close)}?" if close else "`sparkmesh info` lists the models",
    )


def render_model_sql(
    project: Project,
    name: str,
    *,
    start: datetime,
    end: datetime,
    execution_time: datetime,
    version_for: Callable[[Model], str] | None = None,
) -> str:
    """The Spark SQL that runs for ``[start, end)``.

    ``version_for`` picks the physical tables; by default, the version a plan gives a new snapshot of the model.
    """
    model = find_model(project, name)
    return render_query(
        model,
        start=start,
        end=end,
        execution_time=execution_time,
        table_for=physical_tables(project.models, project.external_models, version_for or new_snapshot_version),
        models=project.models,
        variables=project.config.variables,
    )


def new_snapshot_version(model: Model) -> str:
    """The version of the physical table a plan would create for this definition of the model."""
    from dagster_sparkmesh.plan.versions import new_version

    return new_version(model.name, model.fingerprint)


def clean_project(project_path: Path) -> list[Path]:
    """Remove the generated caches of a project without loading it (it may not load: that is often why)."""
    if not project_path.is_dir():
        raise ProjectError(f"project folder {project_path} does not exist", path=project_path)
    targets = [state_dir(project_path) / folder for folder in CACHE_FOLDERS]
    models = project_path / "models"
    if models.is_dir():
        targets += sorted(models.rglob("__pycache__"))  # bytecode of Python models imported at load time
    removed = []
    for target in targets:
        if target.is_symlink() or target.is_file():
            target.unlink(missing_ok=True)
        elif target.is_dir():
            shutil.rmtree(target, ignore_errors=True)
        else:
            continue
        removed.append(target)
    return removed


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print models, kinds, fingerprints and dependencies as JSON.")
@pass_cli_context
def info(context: CliContext, as_json: bool) -> None:
    """Models by kind, DAG depth and load warnings."""
    project = context.project()
    if as_json:
        click.echo(json.dumps(info_payload(project), indent=2))
        return
    console = Console(soft_wrap=True)
    console.print(f"Project [bold]{project.path}[/bold]")
    table = Table("kind", "models", "names")
    by_kind: dict[str, list[str]] = {}
    for model in project.models.values():
        by_kind.setdefault(model.kind_name, []).append(model.name)
    for kind, names in sorted(by_kind.items()):
        table.add_row(kind, str(len(names)), ", ".join(sorted(names)))
    console.print(table)
    console.print(f"{len(project.models)} models, {len(project.external_models)} external models, "
                  f"DAG depth {len(dag_levels(project))}")
    if project.standalone_audits:
        console.print(f"{len(project.standalone_audits)} standalone audits: {', '.join(project.standalone_audits)}")
    for warning in project.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}", markup=True, highlight=False)


@click.command()
@click.argument("model_name")
@click.option("--start", help="First day or instant of the interval (YYYY-MM-DD or a timestamp). Default: yesterday.")
@click.option("--end", help="Last day (inclusive) or end instant (exclusive). Default: one day after --start.")
@click.option("--execution-time", help="Value of the @execution_* macros. Default: now (UTC).")
@pass_cli_context
def render(context: CliContext, model_name: str, start: str | None, end: str | None, execution_time: str | None) -> None:
    """Print the exact Spark SQL that MODEL_NAME runs for an interval (a selector: each model it picks)."""
    from dagster_sparkmesh.plan.selectors import is_selector, select_models

    start_at, end_at = interval_from_options(start, end)
    project = context.project()
    names = select_models(project.models, [model_name]) if is_selector(model_name) else [model_name]
    for number, name in enumerate(names):
        sql = render_model_sql(
            project,
            name,
            start=start_at,
            end=end_at,
            execution_time=execution_time_from_option(execution_time),
            version_for=context.version_for,
        )
        click.echo(sql if len(names) == 1 else f"{'' if not number else chr(10)}-- {name}\n{sql}")


@click.command()
@click.option("--dot", is_flag=True, help="Print the DAG as Graphviz dot.")
@pass_cli_context
def dag(context: CliContext, dot: bool) -> None:
    """Show the models' dependency graph."""
    project = context.project()
    if dot:
        click.echo(dot_graph(project))
        return
    console = Console(highlight=False, soft_wrap=True)
    for index, level in enumerate(dag_levels(project)):
        console.print(f"[bold]level {index}[/bold]")
        for name in level:
            model = project.models[name]
            parents = ", ".join(sorted(model.depends_on))
            console.print(f"  {name} ({model.kind_name})" + (f" <- {parents}" if parents else ""), markup=False)


@click.command()
@pass_cli_context
def clean(context: CliContext) -> None:
    """Remove generated caches (.sparkmesh/cache); never the state store or the warehouse."""
    removed = clean_project(context.project_path)
    for path in removed:
        click.echo(f"removed {path}")
    if not removed:
        click.echo("nothing to clean")


COMMANDS = (info, render, dag, clean)
