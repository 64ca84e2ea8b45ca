"""The model dependency graph: resolve references, drop disabled models, order parents before children.

Order is deterministic (ready models by name), so two loads of the same project list models identically.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from pathlib import Path

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.model.table_formats import project_lakehouse_format
from dagster_sparkmesh.project.sql.references import TableReference
from dagster_sparkmesh.snapshot.naming import folded_name

References = Mapping[str, tuple[TableReference, ...]]
"""Model name → the raw references of its file."""


def drop_disabled(models: Mapping[str, Model], references: References) -> dict[str, Model]:
    """Models with ``enabled false`` are removed; an enabled model that reads one is an error."""
    disabled = {name for name, model in models.items() if not model.enabled}
    for name, model in models.items():
        if name in disabled:
            continue
        for reference in references.get(name, ()):
            if reference.name in disabled:
                raise ProjectError(
                    f"{name} reads {reference.name}, which is disabled (enabled false)",
                    path=model.path,
                    line=reference.line or None,
                    snippet=reference.snippet or None,
                    hint=f"enable {reference.name} or stop reading it",
                )
    return {name: model for name, model in models.items() if name not in disabled}


def check_references(models: Mapping[str, Model], references: References, externals: Mapping[str, object]) -> None:
    """Every reference must be a model or an external model; all unknown names are reported at once."""
    check_folded_names(models)  # before references: a reference to either of two such models is ambiguous
    project_lakehouse_format(models.values())  # one session serves one format: refused at load, not at a write
    unknown: list[tuple[Model, TableReference]] = []
    for name, model in models.items():
        for reference in references.get(name, ()):
            if reference.name == name:
                continue  # a self-reference (``with_self_references``)
            if reference.name not in models and reference.name not in externals:
                unknown.append((model, reference))
    if unknown:
        raise _unknown_error(unknown)


def check_folded_names(models: Mapping[str, Model]) -> None:
    """``ecommerce.silver.orders`` owns the objects of ``ecommerce__silver.orders`` (``snapshot.naming``): a project
    with both would write one table and one view for two models."""
    owners: dict[str, str] = {}
    for name in sorted(models):
        if models[name].catalog is not None:
            continue  # (it lives in its own catalog: nothing is folded)
        folded = folded_name(name)
        other = owners.setdefault(folded, name)
        if other != name:
            model = models[name]
            raise ProjectError(
                f"models {other} and {name} would share the table and views of {folded}",
                path=model.path,
                line=model.line,
                hint="a catalog other than spark_catalog becomes part of the schema (catalog.schema.table owns "
                "catalog__schema.table): rename one of the two models",
            )


def with_self_references(models: Mapping[str, Model]) -> dict[str, Model]:
    """A model that reads its own name reads its own table's earlier data, as in SQLMesh: not a dependency.

    Its first interval reads an empty table, which is created from its declared ``columns`` before any query runs:
    without them, nothing says what the empty table holds, so they are required."""
    result: dict[str, Model] = {}
    for name, model in models.items():
        if name not in model.depends_on:
            result[name] = model
            continue
        if not model.columns:
            raise ProjectError(
                f"{name} reads itself but declares no columns",
                path=model.path,
                line=model.line,
                hint="a self-referencing model's first interval reads its own empty table: declare its "
                "columns (name type, ...) in the MODEL header",
            )
        result[name] = model.model_copy(update={"depends_on": model.depends_on - {name}, "depends_on_self": True})
    return result


def _unknown_error(unknown: list[tuple[Model, TableReference]]) -> ProjectError:
    model, first = unknown[0]
    listed = ", ".join(f"{ref.name} ({_where(owner.path, ref.line)})" for owner, ref in unknown)
    return ProjectError(
        f"unknown table{'s' if len(unknown) > 1 else ''} referenced: {listed}",
        path=model.path,
        line=first.line or None,
        snippet=first.snippet or None,
        hint="declare tables that the project reads but does not build in external_models.yaml "
        "(or fix the name; a name without a schema is in the schema default)",
    )


def _where(path: Path, line: int) -> str:
    return f"{path.name}:{line}" if line else path.name


def topological_order(models: Mapping[str, Model]) -> list[str]:
    """Names with parents before children (ties by name); a cycle is an error naming it."""
    pending = {name: {parent for parent in model.depends_on if parent in models} for name, model in models.items()}
    children: dict[str, list[str]] = {name: [] for name in models}
    for name, parents in pending.items():
        for parent in parents:
            children[parent].append(name)
    ready = [name for name, parents in pending.items() if not parents]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        name = heapq.heappop(ready)
        order.append(name)
        for child in children[name]:
            pending[child].discard(name)
            if not pending[child]:
                heapq.heappush(ready, child)
    if len(order) < len(models):
        raise _cycle_error(models, {name for name, parents in pending.items() if parents})
    return order


def _cycle_error(models: Mapping[str, Model], blocked: set[str]) -> ProjectError:
    cycle = find_cycle(models, blocked)
    first = models[cycle[0]]
    return ProjectError(
        f"dependency cycle: {' -> '.join(cycle)} (each model reads the next)",
        path=first.path,
        line=first.line,
        hint="a model cannot depend on itself through other models; break the cycle",
    )


def find_cycle(models: Mapping[str, Model], blocked: set[str]) -> list[str]:
    """Walk parents from the smallest blocked name until a name repeats; return that loop (reader first), closed."""
    path: list[str] = []
    seen: dict[str, int] = {}
    name = min(blocked)
    while name not in seen:
        seen[name] = len(path)
        path.append(name)
        name = min(parent for parent in models[name].depends_on if parent in blocked)
    loop = path[seen[name] :]
    start = loop.index(min(loop))
    loop = loop[start:] + loop[:start]
    return [*loop, loop[0]]
