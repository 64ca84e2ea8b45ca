"""How a custom materialization's tables are made: the model's settings, with what a call passes under SQLMesh's
keywords over them (SQLMesh's own ``_replace_query_for_model`` passes sqlglot expressions)."""

import pytest
from sqlglot import exp

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.writes.custom_adapter import TableSettings

MODEL = TableSettings(partitioned_by=("region",), table_format="iceberg", properties={"owner": "sales"})


def test_a_call_without_settings_keeps_the_models():
    assert MODEL.overridden({}) == MODEL
    assert MODEL.overridden({"table_format": "iceberg", "storage_format": None}) == MODEL


def test_sqlmesh_keywords_override_partitions_and_properties():
    made = MODEL.overridden({
        "partitioned_by": [exp.column("ds"), exp.column("region", quoted=True)],
        "table_properties": {"write.format.default": exp.Literal.string("orc"), "retained": exp.Literal.number(3)},
    })
    assert made == TableSettings(("ds", "region"), "iceberg", {"write.format.default": "orc", "retained": "3"})


def test_a_call_asking_for_another_lakehouse_format_is_refused():
    with pytest.raises(ExecutionError, match="asked for a delta table, but the model's table is iceberg"):
        MODEL.overridden({"table_format": "delta"})
    with pytest.raises(ExecutionError, match="default-layout"):
        TableSettings().overridden({"storage_format": "iceberg"})
    assert TableSettings().overridden({"storage_format": "parquet"}) == TableSettings()
