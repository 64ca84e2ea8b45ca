"""SQLMesh's ``when_matched`` and ``merge_filter`` against Spark's own ``MERGE INTO``: a lakehouse table takes the
clauses as written, and a plain table (no MERGE in Spark) must end with the same rows from sparkmesh's query
(``model.merge_clauses.merged_select``). Each case starts both tables from the same rows and merges the same new
rows; Iceberg's or Delta's MERGE is the referee."""

from __future__ import annotations

import pytest

from dagster_sparkmesh.engine.lakehouse_tables import merge_by_key
from dagster_sparkmesh.model.merge_clauses import MergeRules
from dagster_sparkmesh.project.sql.merge_properties import read_when_matched

pytestmark = [pytest.mark.lakehouse, pytest.mark.slow]

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
                                       _refused),
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
