"""INCREMENTAL_BY_PARTITION and INCREMENTAL_UNMANAGED on Spark: the rows each run leaves, the intervals it records."""

from datetime import date, datetime

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.snapshot.records import Interval

# raw.events has ids 1..3 on every day 01-01..01-05, amount id * 10; id 3 stops arriving after 01-02.
LATEST_BY_ID = """
MODEL (name shop.latest_by_id, kind INCREMENTAL_BY_PARTITION, partitioned_by id);

SELECT MAX(ds) AS last_ds, SUM(amount) AS amount, id
FROM raw.events
WHERE ds BETWEEN @start_ds AND @end_ds AND (id <> 3 OR ds < DATE'2024-01-03')
GROUP BY id
"""
EVENT_LOG = """
MODEL (name shop.event_log, kind INCREMENTAL_UNMANAGED);

SELECT ds, id FROM raw.events WHERE ds BETWEEN @start_ds AND @end_ds
"""
LAST_BATCH = """
MODEL (name shop.last_batch, kind INCREMENTAL_UNMANAGED (insert_overwrite true));

SELECT ds, id FROM raw.events WHERE ds BETWEEN @start_ds AND @end_ds
"""


def _run(make_context, project, end: datetime, **options):
    ctx = make_context(project)
    plan = plan_for(ctx, None, end, **options)
    apply_plan(ctx, plan)
    return ctx, plan


def _recorded(ctx, plan, name: str) -> list[Interval]:
    return ctx.state.get_intervals(name, plan.version_of(name))


def _days(first: int, end: int) -> list[Interval]:
    return [Interval(start=datetime(2024, 1, first), end=datetime(2024, 1, end))]


def test_by_partition_replaces_exactly_the_partitions_the_run_returns(spark, mini_project, make_context):
    (mini_project / "models" / "latest_by_id.sql").write_text(LATEST_BY_ID)
    _run(make_context, mini_project, datetime(2024, 1, 3))
    rows = "SELECT id, last_ds, amount FROM shop.latest_by_id ORDER BY id"
    assert [tuple(r) for r in spark.sql(rows).collect()] == [
        (1, date(2024, 1, 2), 20), (2, date(2024, 1, 2), 40), (3, date(2024, 1, 2), 60)
    ]  # fmt: skip

    ctx, plan = _run(make_context, mini_project, datetime(2024, 1, 5))
    # ids 1 and 2 are replaced by the 01-03..01-04 rows (not added to); id 3, absent from the run, keeps its row.
    assert [tuple(r) for r in spark.sql(rows).collect()] == [
        (1, date(2024, 1, 4), 20), (2, date(2024, 1, 4), 40), (3, date(2024, 1, 2), 60)
    ]  # fmt: skip
    assert _recorded(ctx, plan, "shop.latest_by_id") == _days(1, 5)
    table = physical_table("shop.latest_by_id", plan.version_of("shop.latest_by_id"))
    assert ctx.engine.catalog.partition_columns(table) == ["id"]


def test_unmanaged_appends_each_run_and_is_never_restated(spark, mini_project, make_context):
    (mini_project / "models" / "event_log.sql").write_text(EVENT_LOG)
    (mini_project / "models" / "last_batch.sql").write_text(LAST_BATCH)
    _run(make_context, mini_project, datetime(2024, 1, 3))
    ctx, plan = _run(make_context, mini_project, datetime(2024, 1, 5))
    days = "SELECT ds, COUNT(*) FROM shop.{} GROUP BY ds ORDER BY ds"
    assert [r[1] for r in spark.sql(days.format("event_log")).collect()] == [3, 3, 3, 3]  # each day once
    assert _recorded(ctx, plan, "shop.event_log") == _days(1, 5)
    # insert_overwrite without partitioned_by: each run's rows replace the table.
    assert [r[0].day for r in spark.sql(days.format("last_batch")).collect()] == [3, 4]
    assert _recorded(ctx, plan, "shop.last_batch") == _days(1, 5)

    ctx = make_context(mini_project)
    again = plan_for(ctx, None, datetime(2024, 1, 5), restate_models=["shop.event_log"])
    assert "shop.event_log" not in again.restatements and "shop.event_log" not in again.missing_intervals
    assert "shop.event_log not restated: disable_restatement (its kind's, or its kind's default)" in again.notes


NEW_IDS = """
MODEL (name shop.first_seen, kind INCREMENTAL_UNMANAGED, columns (id INT, first_ds DATE));

SELECT e.id, MIN(e.ds) AS first_ds
FROM raw.events AS e
WHERE e.ds BETWEEN @start_ds AND @end_ds AND e.id NOT IN (SELECT id FROM shop.first_seen)
GROUP BY e.id
"""


def test_an_unmanaged_model_that_reads_itself_appends_only_what_it_lacks(spark, mini_project, make_context):
    (mini_project / "models" / "first_seen.sql").write_text(NEW_IDS)
    _run(make_context, mini_project, datetime(2024, 1, 3))  # its first run reads its own empty table
    ctx, plan = _run(make_context, mini_project, datetime(2024, 1, 5))
    rows = spark.sql("SELECT id, first_ds FROM shop.first_seen ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [(1, date(2024, 1, 1)), (2, date(2024, 1, 1)), (3, date(2024, 1, 1))]
    assert _recorded(ctx, plan, "shop.first_seen") == _days(1, 5)
