"""A ``storage_format`` beside a ``table_format`` is the format of the table's files, as on SQLMesh's Spark engine
(the table property ``write.format.default``): an Iceberg table of ORC files, which another engine reads."""

from __future__ import annotations

from datetime import datetime

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from tests.lakehouse.conftest import format_project
from tests.lakehouse.outside_spark import rows_outside_spark, spark_rows, table_location

pytestmark = [pytest.mark.lakehouse, pytest.mark.iceberg_only]

STORES = "lh_src.stores"
START, DAY_2 = datetime(2024, 1, 1), datetime(2024, 1, 2)


def test_an_iceberg_table_with_a_storage_format_writes_its_files_in_it(spark, tmp_path, clean_catalog, make_context):
    source = (STORES, "SELECT * FROM VALUES (1, 'north'), (2, 'south') AS stores(id, region)", "id: int, region: string")
    models = {"stores.sql": "MODEL (name lhf.stores, kind FULL, storage_format orc);\n"
                            f"SELECT region, COUNT(*) AS stores FROM {STORES} GROUP BY region"}
    project = format_project(spark, tmp_path / "orc", "iceberg", source, models)
    ctx = make_context(project, clock=DAY_2)
    plan = plan_for(ctx, START, DAY_2)
    apply_plan(ctx, plan)

    table = plan.physical_table_of("lhf.stores")
    assert dict(spark.sql(f"SHOW TBLPROPERTIES {table}").collect())["write.format.default"] == "orc"
    data = (table_location(spark, table) / "data").rglob("*")
    files = [path.suffix for path in data if path.is_file() and path.suffix != ".crc"]  # (Hadoop's checksums)
    assert files and set(files) == {".orc"}
    assert rows_outside_spark("iceberg", table_location(spark, table)) == spark_rows(spark, "lhf.stores")
