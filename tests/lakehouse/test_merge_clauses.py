"""SQLMesh's ``when_matched`` and ``merge_filter`` against Spark's own ``MERGE INTO``: a lakehouse table takes the
clauses as written, and a plain table (no MERGE in Spark) must end with the same rows from sparkmesh's query
(``model.merge_clauses.merged_select``). Each case starts both tables from the same rows and merges the same new
rows; Iceberg's or Delta's MERGE is the referee."""

from __future__ import annotations

from datetime import datetime

import pytest

from dagster_sparkmesh.engine.lakehouse_tables import merge_by_key
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.model.merge_clauses import MergeRules
from dagster_sparkmesh.project.sql.merge_properties import read_when_matched
from tests.lakehouse.conftest import format_project

pytestmark = pytest.mark.lakehouse

ROWS = "SELECT * FROM VALUES {} AS t(id, name, amount, updated_at)"
HELD = ROWS.format("(1, 'a', 10, 1), (2, 'b', 20, 1), (3, 'c', 30, 1), (4, 'd', 40, 1), (NULL, 'n', 0, 1)")
NEW = ROWS.format("(1, NULL, 11, 2), (2, 'b2', 21, 0), (3, 'c3', -1, 2), (5, 'e', 50, 2), (NULL, 'n2', 1, 2)")


def _refused(message, hint):
    return AssertionError(f"{message} ({hint})")


CASES = {
    "default": MergeRules(),
    "conditional_update_and_delete": MergeRules(when_matched=read_when_matched(
        "(WHEN MATCHED AND source.amount < 0 THEN DELETE "
        "WHEN MATCHED AND source.updated_at > target.updated_at THEN UPDATE SET target.amount = source.amount, "
        "target.name = COALESCE(source.name, target.name))", "spark", _refused)),
    "update_all_when_newer": MergeRules(when_matched=read_when_matched(
        "WHEN MATCHED AND source.updated_at >= target.updated_at THEN UPDATE SET *", "spark", _refused)),
    "one_column_kept_from_the_table": MergeRules(when_matched=read_when_matched(
        "WHEN MATCHED THEN UPDATE SET target.amount = source.amount + target.amount", "spark", _refused)),
    "filter": MergeRules(merge_filter="target.amount >= 20 AND source.updated_at > 0"),
    "filter_and_clauses": MergeRules(
        merge_filter="target.amount < 40",
        when_matched=read_when_matched("WHEN MATCHED AND source.amount > 0 THEN UPDATE SET target.name = source.name",
                                       "spark", _refused),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_plain_table_ends_with_the_rows_sparks_merge_into_leaves(engine, schema, table_format, case):
    spark = engine.catalog.spark
    refereed, plain = f"{schema}.merged_{case}", f"{schema}.emulated_{case}"
    spark.sql(f"CREATE TABLE {refereed} USING {table_format} AS {HELD}")
    spark.sql(f"CREATE TABLE {plain} USING parquet AS {HELD}")

    merge_by_key(spark, refereed, NEW, ["id"], CASES[case])
    engine.upsert_by_key(plain, NEW, ["id"], CASES[case])

    def rows(table):
        return sorted(spark.sql(f"SELECT * FROM {table}").collect(), key=lambda row: tuple(str(v) for v in row))

    assert rows(plain) == rows(refereed)
    assert rows(plain) != sorted(spark.sql(HELD).collect(), key=lambda row: tuple(str(v) for v in row))


def test_a_lakehouse_models_runs_merge_through_its_clauses_and_rendered_filter(
    tmp_path, table_format, clean_catalog, spark, make_context
):
    # The model and days of tests/execution/test_merge_clauses.py, in the format: the same rows at the end.
    from tests.execution.test_merge_clauses import MODEL

    source = ("mc_src.events", "SELECT 1 AS id, 'a' AS name, 10 AS amount, DATE'2024-01-01' AS seen_at UNION ALL "
              "SELECT 2, 'b', 20, DATE'2024-01-01' UNION ALL SELECT 3, 'c', 30, DATE'2024-01-01'",
              "id: int, name: string, amount: int, seen_at: date")
    project = format_project(spark, tmp_path / "merges", table_format, source, {"latest.sql": MODEL})
    days = [
        (datetime(2024, 1, 2), None),
        (datetime(2024, 1, 3), "(1, 'a2', 11, DATE'2024-01-02'), (2, 'b', -1, DATE'2024-01-02'), (5, 'e', 50, DATE'2024-01-02')"),
        (datetime(2024, 1, 4), "(1, 'a3', 12, DATE'2024-01-03'), (3, 'c3', 33, DATE'2024-01-03')"),
    ]
    for clock, arriving in days:
        if arriving:
            spark.sql(f"INSERT INTO mc_src.events VALUES {arriving}")
        ctx = make_context(project, clock=clock)
        apply_plan(ctx, plan_for(ctx, None, clock))
    rows = spark.sql("SELECT id, name, amount, CAST(seen_at AS STRING) FROM mc.latest ORDER BY id, seen_at").collect()
    assert [tuple(row) for row in rows] == [
        (1, "a", 12, "2024-01-03"), (3, "c", 30, "2024-01-01"), (3, "c3", 33, "2024-01-03"), (5, "e", 50, "2024-01-02"),
    ]
