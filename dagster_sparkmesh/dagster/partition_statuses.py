"""Partition statuses that say what the tables hold.

Dagster marks a partition failed when a run that planned it failed without materializing it, and only a later
materialization of that partition clears the mark. Two cases where the state store knows better:

- a ranged step whose model failed a blocking audit in a later batch: its earlier batches passed their audits
  and are recorded, so they are materialized, partition by partition (``recorded_partitions``);
- a partition left failed by a version that was never promoted, after a revert (or any commit) brings back a
  version whose interval is complete: the git sensor reports it materialized at that version
  (``reconciling_materializations``), so the asset page shows what the environment serves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg
from dagster._core.storage.partition_status_cache import AssetPartitionStatus

from dagster_sparkmesh.dagster.partitions import to_interval
from dagster_sparkmesh.dagster.specs import SparkMeshSpecs
from dagster_sparkmesh.snapshot.records import Interval

RecordedIntervals = Mapping[str, Sequence[Interval]]


def recorded_partitions(
    partitions_def: dg.TimeWindowPartitionsDefinition, recorded: Sequence[Interval], within: Sequence[str]
) -> list[str]:
    """The partition keys of ``within`` whose interval ``recorded`` covers."""
    return [key for key in within if _covered(to_interval(partitions_def.time_window_for_partition_key(key)), recorded)]


def failed_partitions(
    instance: dg.DagsterInstance, key: dg.AssetKey, partitions_def: dg.TimeWindowPartitionsDefinition
) -> list[str]:
    statuses = instance.get_status_by_partition(key, partitions_def.get_partition_keys(), partitions_def) or {}
    return [partition for partition, status in statuses.items() if status == AssetPartitionStatus.FAILED]


def reconciling_materializations(
    instance: dg.DagsterInstance, specs: SparkMeshSpecs, versions: Mapping[str, str], recorded: RecordedIntervals
) -> list[dg.AssetMaterialization]:
    """Materializations of the partitions Dagster shows failed whose interval ``recorded`` holds complete at the
    model's version (``versions``: the environment's)."""
    events = []
    for group in specs.groups:
        if group.partitions_def is None:
            continue
        for spec in group.specs:
            name = specs.model_by_key[spec.key]
            failed = failed_partitions(instance, spec.key, group.partitions_def)
            if not failed or name not in versions:
                continue
            covered = recorded_partitions(group.partitions_def, recorded.get(name, ()), failed)
            events += [_reconciled(spec.key, partition, versions[name]) for partition in covered]
    return events


def _covered(interval: Interval, recorded: Sequence[Interval]) -> bool:
    return any(r.start <= interval.start and interval.end <= r.end for r in recorded)


def _reconciled(key: dg.AssetKey, partition: str, version: str) -> dg.AssetMaterialization:
    return dg.AssetMaterialization(
        asset_key=key,
        partition=partition,
        metadata={
            "sparkmesh/version": version,
            "sparkmesh/recomputed": "no: this version's interval was already complete (written and audited by an "
            "earlier run); an earlier failure of another version is no longer what the environment serves",
        },
    )
