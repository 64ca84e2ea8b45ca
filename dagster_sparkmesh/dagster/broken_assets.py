"""A model that does not load stays in the asset graph as an asset carrying its error (the first thing on its
page), and so do the models that read it; a materialization of one fails with that message, without a stack. The
other models load and run: one syntax error no longer empties the code location."""

from __future__ import annotations

import dagster as dg

from dagster_sparkmesh.project.broken import BrokenModel
from dagster_sparkmesh.project.records import Project

LOAD_ERROR = "sparkmesh/load_error"


def broken_model_assets(project: Project, taken: set[dg.AssetKey]) -> list[dg.AssetsDefinition]:
    """One asset per broken model whose name is known and whose key no loaded asset has."""
    return [_asset(broken) for broken in project.broken if broken.name and _key(broken) not in taken]


def _key(broken: BrokenModel) -> dg.AssetKey:
    return dg.AssetKey(broken.name.split("."))  # type: ignore[union-attr]  # filtered on the name


def _asset(broken: BrokenModel) -> dg.AssetsDefinition:
    error = broken.error

    @dg.asset(
        key=_key(broken),
        deps=[dg.AssetKey(broken.cause.split("."))] if broken.cause else [],
        group_name="sparkmesh_broken",
        description=f"Does not load: {error}",
        metadata={LOAD_ERROR: dg.MetadataValue.md(f"```\n{error}\n```"), "sparkmesh/path": str(broken.path)},
        kinds={"spark"},
    )
    def _does_not_load(context):  # annotations stay off: Dagster inspects them
        raise dg.Failure(description=f"{broken.name} does not load: {error}", allow_retries=False)

    return _does_not_load


def broken_summary(project: Project) -> str:
    """Why nothing is promoted while models do not load (the promotion would drop their views)."""
    lines = [f"- {b.name or b.path.name}: {b.error}" for b in project.broken]
    return f"{len(project.broken)} model(s) do not load; fix them first:\n" + "\n".join(lines)
