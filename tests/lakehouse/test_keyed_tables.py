"""Kinds matched by key on lakehouse tables: a unique-key model's new rows are merged into its Iceberg or Delta
table by ``MERGE INTO`` (one commit, keys null-safe), an SCD type 2 model's history is replaced in one commit; a
repeated key is refused before anything is written; on Iceberg a failing blocking audit of a merge leaves what
readers see untouched (write-audit-publish)."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.naming import physical_table
from tests.lakehouse.conftest import format_project
from tests.lakehouse.outside_spark import commits, provider, rows_outside_spark, spark_rows, table_location

pytestmark = pytest.mark.lakehouse

CUSTOMERS = "lh_src.customers"
START, DAY_2, DAY_3 = datetime(2024, 1, 1), datetime(2024, 1, 2), datetime(2024, 1, 3)


@pytest.fixture
def keyed_project(tmp_path, table_format, clean_catalog, spark):
    source = (
        CUSTOMERS,
        "SELECT id, CONCAT('c', id) AS name, id * 10 AS amount, DATE '2024-01-01' AS ds, "
        "TIMESTAMP '2024-01-01 08:00:00' AS updated_at FROM range(1, 5)",
        "id: bigint, name: string, amount: bigint, ds: date, updated_at: timestamp",
    )
    return format_project(spark, tmp_path / "keyed", table_format, source, {
        "latest.sql": "MODEL (name lhk.latest, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id), "
        "audits (accepted_range(column := amount, min_v := 0)));\n"
        f"SELECT id, name, amount, ds FROM {CUSTOMERS} WHERE ds BETWEEN @start_ds AND @end_ds",
        "history.sql": "MODEL (name lhk.history, kind SCD_TYPE_2_BY_TIME (unique_key id));\n"
        f"SELECT id, name, amount, updated_at FROM {CUSTOMERS}",
    })


def _run(make_context, project, end: datetime, applied: list | None = None):
    """The plan applied up to ``end``; its results appended to ``applied``."""
    ctx = make_context(project, clock=end)
    plan = plan_for(ctx, START, end)
    result = apply_plan(ctx, plan)
    if applied is not None:
        applied.append(result)
    return plan


def _second_day(spark, amount_of_2: int = 250, repeated: bool = False) -> None:
    """Day 2: customer 2 changes, customer 5 arrives (and, with ``repeated``, customer 5 twice)."""
    extra = ", (5, 'c5b', 60, DATE '2024-01-02', TIMESTAMP '2024-01-02 10:00:00')" if repeated else ""
    spark.sql(
        f"INSERT INTO {CUSTOMERS} VALUES (5, 'c5', 50, DATE '2024-01-02', TIMESTAMP '2024-01-02 09:00:00'){extra}"
    )
    spark.sql(f"CREATE TABLE lh_src.changed USING parquet AS SELECT id, name, IF(id = 2, {amount_of_2}, amount) AS amount, "
              f"IF(id = 2, DATE '2024-01-02', ds) AS ds, "
              f"IF(id = 2, TIMESTAMP '2024-01-02 12:00:00', updated_at) AS updated_at FROM {CUSTOMERS}")
    spark.sql(f"INSERT OVERWRITE TABLE {CUSTOMERS} SELECT * FROM lh_src.changed")


def _last_commit_is_a_merge(spark, table_format: str, table: str) -> dict[str, str]:
    if table_format == "iceberg":
        summary = spark.sql(f"SELECT summary FROM spark_catalog.{table}.snapshots ORDER BY committed_at DESC LIMIT 1")
        metrics = summary.collect()[0][0]
        return {"updated": metrics["spark.merge-into.num-target-rows-updated"],
                "inserted": metrics["spark.merge-into.num-target-rows-inserted"]}
    row = spark.sql(f"DESCRIBE HISTORY {table} LIMIT 1").select("operation", "operationMetrics").collect()[0]
    assert row[0] == "MERGE"
    return {"updated": row[1]["numTargetRowsUpdated"], "inserted": row[1]["numTargetRowsInserted"]}


def test_a_unique_key_models_new_rows_are_merged_by_key_in_one_commit(spark, keyed_project, make_context, table_format):
    plan = _run(make_context, keyed_project, DAY_2)
    table = physical_table("lhk.latest", plan.version_of("lhk.latest"))
    assert provider(spark, table) == table_format
    before = commits(spark, table_format, f"spark_catalog.{table}")

    _second_day(spark)
    _run(make_context, keyed_project, DAY_3)

    assert commits(spark, table_format, f"spark_catalog.{table}") == before + 1
    assert _last_commit_is_a_merge(spark, table_format, table) == {"updated": "1", "inserted": "1"}
    expected = [(1, "c1", 10, date(2024, 1, 1)), (2, "c2", 250, date(2024, 1, 2)), (3, "c3", 30, date(2024, 1, 1)),
                (4, "c4", 40, date(2024, 1, 1)), (5, "c5", 50, date(2024, 1, 2))]
    assert spark_rows(spark, "lhk.latest") == expected
    assert rows_outside_spark(table_format, table_location(spark, table)) == expected


def test_an_scd_type_2_history_is_kept_in_the_format_table(spark, keyed_project, make_context, table_format):
    (keyed_project / "models" / "latest.sql").unlink()  # (it refuses the repeated key)
    _run(make_context, keyed_project, DAY_2)
    _second_day(spark, repeated=True)  # customer 5 twice: one row kept, as SQLMesh keeps one (the latest updated_at)
    applied: list = []
    plan = _run(make_context, keyed_project, DAY_3, applied)
    [warning] = next(result.warnings for result in applied[0].models if result.model == "lhk.history")
    assert warning.startswith("lhk.history (") and "several rows for unique_key id, e.g. (5,)" in warning
    table = physical_table("lhk.history", plan.version_of("lhk.history"))

    epoch, changed = datetime(1970, 1, 1), datetime(2024, 1, 2, 12)
    first_seen = datetime(2024, 1, 1, 8)
    expected = [
        (1, "c1", 10, first_seen, epoch, None),
        (2, "c2", 20, first_seen, epoch, changed),
        (2, "c2", 250, changed, changed, None),
        (3, "c3", 30, first_seen, epoch, None),
        (4, "c4", 40, first_seen, epoch, None),
        (5, "c5b", 60, datetime(2024, 1, 2, 10), epoch, None),
    ]
    assert provider(spark, table) == table_format
    assert spark_rows(spark, "lhk.history", "id, name, amount, updated_at, valid_from, valid_to") == expected
    assert len(rows_outside_spark(table_format, table_location(spark, table))) == len(expected)


def test_a_repeated_key_is_refused_before_the_table_changes(spark, keyed_project, make_context, table_format):
    (keyed_project / "models" / "history.sql").unlink()  # (it keeps one row of the repeated key: the test above)
    plan = _run(make_context, keyed_project, DAY_2)
    table = physical_table("lhk.latest", plan.version_of("lhk.latest"))
    before, rows_before = commits(spark, table_format, f"spark_catalog.{table}"), spark_rows(spark, "lhk.latest")

    _second_day(spark, repeated=True)
    with pytest.raises(ExecutionError, match="returns 2 rows for the unique key id = 5"):
        _run(make_context, keyed_project, DAY_3)

    assert commits(spark, table_format, f"spark_catalog.{table}") == before
    assert spark_rows(spark, "lhk.latest") == rows_before


@pytest.mark.iceberg_only
def test_a_merge_failing_its_blocking_audit_on_iceberg_leaves_readers_data_untouched(spark, keyed_project, make_context):
    plan = _run(make_context, keyed_project, DAY_2)
    table = physical_table("lhk.latest", plan.version_of("lhk.latest"))
    rows_before = spark_rows(spark, "lhk.latest")
    main_before = spark.sql(f"SELECT snapshot_id FROM spark_catalog.{table}.refs WHERE name = 'main'").collect()

    _second_day(spark, amount_of_2=-5)  # the accepted_range audit on amount fails for customer 2
    with pytest.raises(ExecutionError, match="accepted_range"):
        _run(make_context, keyed_project, DAY_3)

    assert spark_rows(spark, "lhk.latest") == rows_before
    refs = spark.sql(f"SELECT name, snapshot_id FROM spark_catalog.{table}.refs").collect()
    assert [(name, snapshot) for name, snapshot in refs] == [("main", main_before[0][0])]
