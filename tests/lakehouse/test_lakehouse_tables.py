"""A project whose model_defaults ask for Iceberg or Delta tables, on a session serving that format (marked
``lakehouse``: ``./dev test`` runs this module once per format): its physical tables are real tables of the
format, which another reader (PyIceberg, delta-rs) reads without Spark, and each interval write is one commit."""

from __future__ import annotations

from datetime import datetime

import pytest

from dagster_sparkmesh.engine.lakehouse_tables import AuditBranch
from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.snapshot.records import Interval
from tests.lakehouse.conftest import SOURCE
from tests.lakehouse.outside_spark import (
    commits, provider, rows_outside_spark, spark_rows, table_location,
)
from tests.lifecycle.oracle import compare_with_fresh_build

pytestmark = pytest.mark.lakehouse

START, END = datetime(2024, 1, 1), datetime(2024, 1, 6)
LAKEHOUSE_MODELS = ("lhm.daily", "lhm.events", "lhm.totals")


def _built(make_context, project):
    ctx = make_context(project)
    plan = plan_for(ctx, START, END)
    apply_plan(ctx, plan)
    return ctx, plan


def test_the_physical_tables_are_format_tables_that_another_engine_reads(spark, lakehouse_project, make_context, table_format):
    ctx, plan = _built(make_context, lakehouse_project)

    for name in LAKEHOUSE_MODELS:
        table = physical_table(name, plan.version_of(name))
        assert provider(spark, table) == table_format
        outside = rows_outside_spark(table_format, table_location(spark, table))
        assert outside == spark_rows(spark, name), name  # the prod view reads the table itself
        assert outside  # every model holds rows
    assert spark_rows(spark, "lhm.daily", "ds, orders, total")[0] == (datetime(2024, 1, 1).date(), 8, 1400)
    assert spark_rows(spark, "lhm.totals") == [(5, 7800)]
    assert spark_rows(spark, "lhm.report", "name") == [("north",), ("south",)]  # a VIEW over a format table


def test_a_restated_interval_is_replaced_in_one_commit_and_an_emptied_one_deleted(
    spark, lakehouse_project, make_context, table_format, tmp_path
):
    ctx, plan = _built(make_context, lakehouse_project)
    daily = physical_table("lhm.daily", plan.version_of("lhm.daily"))
    before = commits(spark, table_format, f"spark_catalog.{daily}")
    # The source changes under the model: day 2 loses its rows, day 3 doubles its amounts.
    spark.sql(f"CREATE TABLE lh_src.changed USING parquet AS SELECT id, ds, ts, "
              f"IF(ds = DATE '2024-01-03', amount * 2, amount) AS amount FROM {SOURCE} WHERE ds <> DATE '2024-01-02'")
    spark.sql(f"INSERT OVERWRITE TABLE {SOURCE} SELECT * FROM lh_src.changed")

    restate = make_context(lakehouse_project)
    window = Interval(start=datetime(2024, 1, 2), end=datetime(2024, 1, 4))
    apply_plan(restate, plan_for(restate, START, END, restate_models=("lhm.daily", "lhm.events"), restate_within=window))

    assert commits(spark, table_format, f"spark_catalog.{daily}") == before + 1  # both days in one commit
    assert spark_rows(spark, "lhm.daily", "ds, total") == [
        (datetime(2024, 1, 1).date(), 1400), (datetime(2024, 1, 3).date(), 2 * 1560),
        (datetime(2024, 1, 4).date(), 1640), (datetime(2024, 1, 5).date(), 1720),
    ]
    assert rows_outside_spark(table_format, table_location(spark, daily)) == spark_rows(spark, "lhm.daily")
    assert compare_with_fresh_build(ctx.engine, lakehouse_project, "lhm", tmp_path, end=END, start=START) == []


def test_dropping_a_version_takes_its_files(spark, lakehouse_project, make_context, table_format):
    ctx, plan = _built(make_context, lakehouse_project)
    table = physical_table("lhm.events", plan.version_of("lhm.events"))
    location = table_location(spark, table)
    assert any(location.rglob("*.parquet"))

    ctx.engine.drop_physical(table, is_view=False)

    assert not spark.catalog.tableExists(table)
    assert not [path for path in location.rglob("*") if path.is_file()]  # (Iceberg leaves empty folders)


@pytest.mark.iceberg_only
def test_a_failing_blocking_audit_on_iceberg_leaves_what_readers_see_untouched(spark, lakehouse_project, make_context):
    """Write-audit-publish: a restated interval of a table prod reads goes to a branch, the audits read it there,
    and it is published only when they pass; a failure leaves the table's main branch, and the view, as they were."""
    ctx, plan = _built(make_context, lakehouse_project)
    daily = physical_table("lhm.daily", plan.version_of("lhm.daily"))
    before = spark_rows(spark, "lhm.daily")
    main_before = _main_snapshot(spark, daily)
    # Day 3's amounts turn negative: the model's blocking accepted_range audit on total fails for it.
    spark.sql(f"CREATE TABLE lh_src.negative USING parquet AS SELECT id, ds, ts, "
              f"IF(ds = DATE '2024-01-03', -amount, amount) AS amount FROM {SOURCE}")
    spark.sql(f"INSERT OVERWRITE TABLE {SOURCE} SELECT * FROM lh_src.negative")

    restate = make_context(lakehouse_project)
    window = Interval(start=datetime(2024, 1, 3), end=datetime(2024, 1, 4))
    with pytest.raises(ExecutionError, match="accepted_range"):
        apply_plan(restate, plan_for(restate, START, END, restate_models=("lhm.daily",), restate_within=window))

    assert spark_rows(spark, "lhm.daily") == before
    assert _main_snapshot(spark, daily) == main_before
    assert [row[0] for row in spark.sql(f"SELECT name FROM spark_catalog.{daily}.refs").collect()] == ["main"]


@pytest.mark.iceberg_only
def test_a_branch_a_crashed_write_left_is_dropped_by_the_next_audited_write(spark, lakehouse_project, make_context):
    """A write stopped between its branch and its publication (a killed process) leaves the branch; the next
    audited write of the table drops it, so no branch keeps old snapshots' files alive."""
    ctx, plan = _built(make_context, lakehouse_project)
    daily = physical_table("lhm.daily", plan.version_of("lhm.daily"))
    AuditBranch(spark, daily).open()  # what a crashed write leaves: its branch, never published nor dropped
    assert len(_refs(spark, daily)) == 2

    restate = make_context(lakehouse_project)
    window = Interval(start=datetime(2024, 1, 3), end=datetime(2024, 1, 4))
    apply_plan(restate, plan_for(restate, START, END, restate_models=("lhm.daily",), restate_within=window))

    assert _refs(spark, daily) == ["main"]
    assert dict(spark_rows(spark, "lhm.daily", "ds, total"))[datetime(2024, 1, 3).date()] == 1560


def test_a_passing_audit_publishes_the_restated_interval(spark, lakehouse_project, make_context, table_format):
    """The same restatement with data the audits accept: published (Iceberg: from its branch, Delta: directly)."""
    ctx, plan = _built(make_context, lakehouse_project)
    spark.sql(f"CREATE TABLE lh_src.doubled USING parquet AS SELECT id, ds, ts, "
              f"IF(ds = DATE '2024-01-03', 2 * amount, amount) AS amount FROM {SOURCE}")
    spark.sql(f"INSERT OVERWRITE TABLE {SOURCE} SELECT * FROM lh_src.doubled")

    restate = make_context(lakehouse_project)
    window = Interval(start=datetime(2024, 1, 3), end=datetime(2024, 1, 4))
    apply_plan(restate, plan_for(restate, START, END, restate_models=("lhm.daily",), restate_within=window))

    assert dict(spark_rows(spark, "lhm.daily", "ds, total"))[datetime(2024, 1, 3).date()] == 2 * 1560
    if table_format == "iceberg":
        daily = physical_table("lhm.daily", plan.version_of("lhm.daily"))
        assert [row[0] for row in spark.sql(f"SELECT name FROM spark_catalog.{daily}.refs").collect()] == ["main"]


def _refs(spark, table: str) -> list[str]:
    return [row[0] for row in spark.sql(f"SELECT name FROM spark_catalog.{table}.refs").collect()]


def _main_snapshot(spark, table: str) -> int:
    return spark.sql(f"SELECT snapshot_id FROM spark_catalog.{table}.refs WHERE name = 'main'").collect()[0][0]
