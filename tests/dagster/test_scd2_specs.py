"""SCD type 2 models in Dagster: materialized, unpartitioned assets (each run merges the source's current rows)."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.dagster.translator import SparkMeshTranslator
from dagster_sparkmesh.model import Model


def test_scd_type_2_models_are_unpartitioned():
    translator = SparkMeshTranslator()
    for kind in (
        {"name": "SCD_TYPE_2_BY_TIME", "unique_key": ("id",)},
        {"name": "SCD_TYPE_2_BY_COLUMN", "unique_key": ("id",), "columns": ("*",)},
    ):
        model = Model(name="dim.customers", path=Path("m.sql"), query="SELECT 1 AS id", kind=kind, source="sql")
        assert translator.get_partitions_def(model, "2024-01-01") is None
        assert translator.get_metadata(model, "prod")["sparkmesh/kind"] == kind["name"]
