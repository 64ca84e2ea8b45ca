"""What a model step reports to Dagster: its log lines, and per model a materialization or, when the model was
already up to date, an observation that says so.

A model found up to date was not recomputed. Reporting nothing is not an option in Dagster: a step output that is
not yielded makes Dagster skip every later step that depends on it (the promotion of a "Materialize all" run),
so it is reported as what it is, a materialization marked ``sparkmesh/up_to_date`` whose data version is the one
Dagster already holds for the asset: unchanged data, and nothing downstream turns stale. Its audits are evaluated again on the current table instead, so its checks show
real results rather than "skipped". Row counts: per partition where a grouped count over the range can tell
them (``dagster/partition_row_count``), the range's total once (on its last partition), and
``dagster/row_count`` for unpartitioned tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import dagster as dg

from dagster_sparkmesh.dagster.markdown import step_table
from dagster_sparkmesh.dagster.events import check_result, check_results, materialize_result
from dagster_sparkmesh.dagster.partition_statuses import recorded_partitions
from dagster_sparkmesh.dagster.row_counts import partition_row_counts, table_row_count
from dagster_sparkmesh.dagster.run_log import left_missing, model_done
from dagster_sparkmesh.dagster.specs import SparkMeshSpecs
from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.execution.audits import run_audits
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.results import ModelRunResult
from dagster_sparkmesh.project.records import Project

StepEvent = dg.MaterializeResult | dg.AssetCheckResult


@dataclass
class StepReport:
    context: dg.AssetExecutionContext
    ctx: ExecutionContext
    project: Project
    specs: SparkMeshSpecs
    translator: SparkMeshTranslator
    partitions: Sequence[str]
    """The run's partition keys, in order; empty for an unpartitioned step."""
    unfinished: list[ModelRunResult] = field(default_factory=list)
    """Partitioned models that left some of the run's intervals missing (inputs incomplete, or signals not ready):
    not reported materialized; the step fails with them (``unfinished_failure``)."""
    step_table_added: bool = False

    def log_done(self, result: ModelRunResult) -> None:
        self.context.log.info(model_done(result, self.project.models.get(result.model), bool(self.partitions)))
        for warning in result.warnings:
            self.context.log.warning(f"sparkmesh: {warning}")

    def events(self, results: Sequence[ModelRunResult], *, recheck: bool = True) -> Iterator[StepEvent]:
        """``recheck``: evaluate the audits of up-to-date models again (not while a terminated run winds down)."""
        selected = set(self.context.selected_asset_check_keys)
        for result in results:
            if result.failed_blocking_audits:
                continue
            if (result.skipped and not result.not_ready) or result.kept:
                yield from self._up_to_date(result, selected if recheck else set())
                continue
            if self.partitions and (result.incomplete or result.not_ready):
                self.unfinished.append(result)
                continue
            if result.incomplete or result.not_ready:
                self.context.log.warning(left_missing(result))
            key = self.specs.key_by_model[result.model]
            row_count = self._add_row_counts(result, key)
            self._add_step_table(results, key)
            yield materialize_result(result, key, row_count=row_count)
            yield from check_results(result.audits, self.specs.check_keys.get(result.model, ()), selected)

    def recorded_of_failed(self, versions: dict[str, str]) -> Iterator[dg.AssetMaterialization]:
        """The run's partitions of failed models (``versions``: name to version) that are recorded nonetheless:
        batches that passed their audits before a later one failed. Only the rest of their window fails."""
        if not self.partitions:
            return
        selected = set(self.context.selected_asset_keys)
        for name, version in versions.items():
            key = self.specs.key_by_model.get(name)
            if key not in selected:
                continue
            partitions_def = self.specs.group_of(name).partitions_def
            recorded = self.ctx.state.get_intervals(name, version)
            for partition in recorded_partitions(partitions_def, recorded, self.partitions):
                yield dg.AssetMaterialization(asset_key=key, partition=partition, metadata={
                    "sparkmesh/version": version,
                    "sparkmesh/recorded": "written and audited before a later batch of the run failed",
                })

    def _count_partitions(self) -> bool:
        limit = self.translator.settings.partition_row_counts_up_to
        return limit is None or len(self.partitions) <= limit

    def _add_step_table(self, results: Sequence[ModelRunResult], key: dg.AssetKey) -> None:
        """The step's one table of models, windows, rows and durations, on its first materialization (the last
        partition's, in a ranged run): the run page shows it once."""
        if self.step_table_added:
            return
        self.step_table_added = True
        table = {"sparkmesh/step_models": dg.MetadataValue.md(step_table(results))}
        self.context.add_asset_metadata(table, asset_key=key, partition_key=self.partitions[-1] if self.partitions else None)

    def _up_to_date(self, result: ModelRunResult, selected: set[dg.AssetCheckKey]) -> Iterator[StepEvent]:
        key = self.specs.key_by_model[result.model]
        table = result.physical_table
        metadata = {
            "sparkmesh/up_to_date": True,
            "sparkmesh/recomputed": dg.MetadataValue.text(_NOT_RECOMPUTED_KEPT if result.kept else _NOT_RECOMPUTED),
            "sparkmesh/version": result.version,
            "sparkmesh/physical_table": table,
            "sparkmesh/intervals": len(result.intervals) if result.kept else 0,  # a kept table's are recorded
        }
        yield dg.MaterializeResult(asset_key=key, metadata=metadata, data_version=self._data_version(key, result.model))
        check_keys = [k for k in self.specs.check_keys.get(result.model, ()) if k in selected]
        if not check_keys:
            return
        try:
            audits = run_audits(self.ctx, self.project.models[result.model], table)
        except SparkMeshError as error:
            self.context.log.warning(f"{result.model}: could not evaluate its audits again: {error}")
            return
        for audit, check_key in zip(audits, self.specs.check_keys[result.model]):
            if check_key in selected:
                yield check_result(audit, check_key, note="the current table: the model was up to date, not recomputed")

    def _data_version(self, key: dg.AssetKey, model: str) -> dg.DataVersion | None:
        """The data version of Dagster's latest materialization of an unpartitioned ``key`` at the model's current
        code version: the data is that one, unchanged. None (Dagster derives one) when there is no such event."""
        if self.partitions:
            return None
        event = self.context.instance.get_latest_materialization_event(key)
        tags = event.asset_materialization.tags if event is not None and event.asset_materialization else None
        if not tags or tags.get("dagster/code_version") != self.translator.get_code_version(self.project.models[model]):
            return None
        version = tags.get("dagster/data_version")
        return dg.DataVersion(version) if version else None

    def _add_row_counts(self, result: ModelRunResult, key: dg.AssetKey) -> int | None:
        """Per-partition counts go straight onto each partition's event; returns an unpartitioned table's count."""
        model = self.project.models[result.model]
        table = result.physical_table
        try:
            if not self.partitions:
                return table_row_count(self.ctx.engine, model, table, result.rows_written)
            partitions_def = self.specs.group_of(result.model).partitions_def
            counts = None
            if self._count_partitions():
                counts = partition_row_counts(self.ctx.engine, model, table, partitions_def, self.partitions)
        except SparkMeshError as error:
            self.context.log.warning(f"{result.model}: rows not counted: {error}")
            return None
        for partition, count in (counts or {}).items():
            self.context.add_asset_metadata({"dagster/partition_row_count": count}, asset_key=key, partition_key=partition)
        range_total = {"sparkmesh/range_rows_written": result.rows_written, "sparkmesh/range_partitions": len(self.partitions)}
        self.context.add_asset_metadata(range_total, asset_key=key, partition_key=self.partitions[-1])
        return None


_NOT_RECOMPUTED = "no: the data was already complete for this version"
_NOT_RECOMPUTED_KEPT = "no: its query and every table it reads are unchanged since its last write; the table was kept"


def unfinished_failure(results: Sequence[ModelRunResult]) -> dg.Failure:
    """The step's partitions that are not complete although it ran: Dagster must not show them materialized."""
    lines = [left_missing(result) for result in results]
    return dg.Failure(
        description="\n".join(lines),
        metadata={
            "models": dg.MetadataValue.json([r.model for r in results]),
            "what_to_do": "materialize the parents' partitions first (or wait for the signals), then these again",
        },
    )
