"""What a step writes to the run log, in the words of someone reading it in the UI.

Intervals are the planner's unit; in Dagster the reader thinks in partitions (for partitioned models) or in
whole tables (for FULL, VIEW and seed models, whose intervals only mean "built for the whole range").
"""

from __future__ import annotations

from collections.abc import Sequence

from dagster_sparkmesh.execution.results import ModelRunResult
from dagster_sparkmesh.model.records import Model

_LISTED = 6


def step_started(models: Sequence[str], environment: str, partitions: Sequence[str]) -> str:
    """``computing 5 models for partitions 2024-01-01 to 2024-01-03 (3) in prod: a, b, c, ...``."""
    listed = ", ".join(models[:_LISTED]) + (f" and {len(models) - _LISTED} more" if len(models) > _LISTED else "")
    count = f"{len(models)} model{'s' if len(models) != 1 else ''}"
    if not partitions:
        return f"building {count} in environment `{environment}`: {listed}"
    span = partitions[0] if len(partitions) == 1 else f"{partitions[0]} to {partitions[-1]}"
    return f"computing {count} for partition{'s' if len(partitions) != 1 else ''} {span} ({len(partitions)}) in environment `{environment}`: {listed}"


def model_done(result: ModelRunResult, model: Model | None, partitioned: bool) -> str:
    if result.kept:
        return (
            f"{result.model}: its query and every table it reads are unchanged since its last write: "
            "the table was kept, not recomputed"
        )
    if result.skipped:
        return (
            f"{result.model}: already up to date (version {result.version}), not recomputed; "
            "its materialization is marked up to date, with its data unchanged"
        )
    seconds = f"{result.duration_seconds:.1f} s"
    if partitioned:
        what = f"computed {len(result.intervals)} partition{'s' if len(result.intervals) != 1 else ''}"
    elif model is not None and model.kind.from_seed_file:
        what = "loaded the seed file"
    elif model is not None and model.kind.physical_is_view:
        what = "created the view"
    else:
        what = "rebuilt the table"
    rows = "" if model is not None and model.kind.physical_is_view else f", {result.rows_written} rows written"
    text = f"{result.model}: {what}{rows} in {seconds}"
    if result.incomplete:
        text += (
            f"; {len(result.incomplete)} interval(s) read parents that lack data for them, so they stay missing "
            "and are computed again once the parents have it"
        )
    return text


def left_missing(result: ModelRunResult) -> str:
    """Why some of a model's intervals stay missing although it ran."""
    parts = []
    if result.incomplete:
        first = min(result.incomplete)
        parts.append(
            f"{len(result.incomplete)} interval(s) computed while a parent lacked them, left missing "
            f"(first {first.start:%Y-%m-%d %H:%M})"
        )
    if result.not_ready:
        interval, signal = result.not_ready[0]
        parts.append(f"{len(result.not_ready)} interval(s) not ready (signal {signal}, first {interval.start:%Y-%m-%d %H:%M})")
    return f"{result.model}: " + "; ".join(parts)
