"""INCREMENTAL_BY_PARTITION / INCREMENTAL_UNMANAGED in Dagster: materialized assets without time partitions
(a run writes by partition key or appends; no interval of theirs is a time window of the table)."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.model import Model


def test_untimed_incremental_models_are_unpartitioned():
    translator = SparkMeshTranslator()
    cases = (({"name": "INCREMENTAL_BY_PARTITION"}, ("region",)), ({"name": "INCREMENTAL_UNMANAGED"}, ()))
    for kind, partitioned_by in cases:
        model = Model(name="s.m", path=Path("m.sql"), query="SELECT 1 AS region", kind=kind, source="sql",
                      partitioned_by=partitioned_by)  # fmt: skip
        assert translator.get_partitions_def(model, "2024-01-01") is None
