"""``partitioned_by`` expressions (BigQuery's ``DATE(ts)``) on the default layouts: the models build, their rows are
the query's (a Spark table partitions by columns, so the table is not partitioned by the expression; the loader
says so), and a later interval replaces its own rows only. From tosun-si/world-cup-qatar-elt-bigquery-sqlmesh."""

from datetime import date, datetime

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.naming import physical_table

LATEST = """
MODEL (name shop.latest, kind FULL, partitioned_by DATE(ingested_at), clustered_by id);

SELECT id, MAX(TIMESTAMP(ds) + INTERVAL 10 HOURS) AS ingested_at, SUM(amount) AS amount FROM raw.events GROUP BY id
"""
TIMED = """
MODEL (name shop.timed, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), partitioned_by (id, bucket(4, amount)));

SELECT ds, id, amount FROM raw.events WHERE ds BETWEEN @start_ds AND @end_ds
"""


def test_models_partitioned_by_expressions_are_built_with_the_querys_rows(spark, mini_project, make_context):
    (mini_project / "models" / "latest.sql").write_text(LATEST)
    (mini_project / "models" / "timed.sql").write_text(TIMED)
    ctx = make_context(mini_project)
    assert sorted(w for w in ctx.project.warnings if "partitioned_by" in w) == [
        "latest.sql:2: partitioned_by DATE(ingested_at) of shop.latest: the table is not partitioned by it (a Spark "
        "table partitions by columns; SQLMesh's DuckDB ignores partitioning too): the rows are the same",
        "timed.sql:2: partitioned_by bucket(4, amount) of shop.timed: the table is not partitioned by it (a Spark "
        "table partitions by columns; SQLMesh's DuckDB ignores partitioning too): the rows are the same",
    ]
    plan = plan_for(ctx, None, datetime(2024, 1, 3))
    apply_plan(ctx, plan)
    assert [tuple(r) for r in spark.sql("SELECT * FROM shop.latest ORDER BY id").collect()] == [
        (1, datetime(2024, 1, 5, 10), 50), (2, datetime(2024, 1, 5, 10), 100), (3, datetime(2024, 1, 5, 10), 150),
    ]

    ctx = make_context(mini_project)
    apply_plan(ctx, plan_for(ctx, None, datetime(2024, 1, 5)))
    rows = spark.sql("SELECT ds, COUNT(*), SUM(amount) FROM shop.timed GROUP BY ds ORDER BY ds").collect()
    assert [tuple(r) for r in rows] == [(date(2024, 1, day), 3, 60) for day in range(1, 5)]
    # The layout's own partitioning stays (a period table's month segments), with nothing made of the bucket.
    table = physical_table("shop.timed", plan.version_of("shop.timed"))
    assert ctx.engine.catalog.partition_columns(table + "__data") == ["sparkmesh_month"]
