"""Forward-only column changes on lakehouse tables: a dropped column (``on_destructive_change allow``) is dropped
from the table in place, on Iceberg (its metadata) and on a Delta table created with column mapping through the
model's ``physical_properties``; the table keeps the model's properties, and readers outside Spark see the same
rows as the view."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.naming import physical_table
from tests.lakehouse.conftest import SOURCE
from tests.lakehouse.outside_spark import rows_outside_spark, spark_rows, table_location

pytestmark = pytest.mark.lakehouse

START, DAY_3, DAY_4 = datetime(2024, 1, 1), datetime(2024, 1, 3), datetime(2024, 1, 4)
MODEL = (
    "MODEL (name lhf.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, forward_only true, "
    "on_destructive_change allow), physical_properties (sm_team = 'analytics'{mapping}));\n"
    "SELECT ds, COUNT(*) AS orders{total} FROM " + SOURCE + " WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds"
)


def _write(project, table_format: str, *, with_total: bool) -> None:
    mapping = ", delta.columnMapping.mode = 'name'" if table_format == "delta" else ""
    total = ", SUM(amount) AS total" if with_total else ""
    (project / "models" / "daily.sql").write_text(MODEL.format(mapping=mapping, total=total))


def _run(make_context, project, end: datetime):
    ctx = make_context(project, clock=end)
    plan = plan_for(ctx, START, end)
    apply_plan(ctx, plan)
    return plan


def test_a_forward_only_change_drops_the_column_from_the_table_in_place(
    spark, lakehouse_project, make_context, table_format
):
    for name in ("daily.sql", "events.sql", "totals.sql", "report.sql"):
        (lakehouse_project / "models" / name).unlink()
    _write(lakehouse_project, table_format, with_total=True)
    plan = _run(make_context, lakehouse_project, DAY_3)
    table = physical_table("lhf.daily", plan.version_of("lhf.daily"))
    properties = dict(spark.sql(f"SHOW TBLPROPERTIES {table}").collect())
    assert properties["sm_team"] == "analytics"

    _write(lakehouse_project, table_format, with_total=False)
    later = _run(make_context, lakehouse_project, DAY_4)

    assert later.version_of("lhf.daily") == plan.version_of("lhf.daily")  # the same table, forward-only
    assert [column.name for column in spark.table(table).schema] == ["ds", "orders"]
    assert spark_rows(spark, "lhf.daily") == [(date(2024, 1, day), 8) for day in (1, 2, 3)]
    assert rows_outside_spark(table_format, table_location(spark, table)) == spark_rows(spark, "lhf.daily")
