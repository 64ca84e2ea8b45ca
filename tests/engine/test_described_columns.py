"""A table's columns read with ``DESCRIBE TABLE`` (one statement) instead of the catalog API's ``listColumns``:
the same answer, the catalog API as the referee."""

from __future__ import annotations

from dagster_sparkmesh.engine.described_columns import CatalogColumn, columns_from_describe


def test_partition_columns_are_marked_and_the_sections_after_the_columns_are_skipped():
    rows = [
        ("ds", "date", None), ("amount", "decimal(10,2)", "money: cents"), ("sparkmesh_month", "string", None),
        ("# Partition Information", "", ""), ("# col_name", "data_type", "comment"), ("sparkmesh_month", "string", None),
    ]
    assert columns_from_describe(rows) == [
        CatalogColumn("ds", "date", False, None),
        CatalogColumn("amount", "decimal(10,2)", False, "money: cents"),
        CatalogColumn("sparkmesh_month", "string", True, None),
    ]


def test_a_column_whose_name_starts_with_a_hash_is_a_column():
    rows = [("#tag", "int", None), ("b", "int", None)]
    assert [column.name for column in columns_from_describe(rows)] == ["#tag", "b"]


def test_fixed_length_strings_are_strings_as_the_catalog_api_says_and_a_view_has_no_partitions():
    rows = [("code", "char(3)", ""), ("note", "struct<text:varchar(10)>", None)]
    assert columns_from_describe(rows) == [
        CatalogColumn("code", "string", False, None, padded=True),
        CatalogColumn("note", "struct<text:string>", False, None),
    ]


def test_the_engine_lists_what_the_catalog_api_lists(engine, spark, schema):
    spark.sql(
        f"CREATE TABLE {schema}.described (a DECIMAL(10,2), b STRUCT<x: INT, `y z`: STRING>, "
        "c ARRAY<MAP<STRING, DOUBLE>>, d TIMESTAMP_NTZ, e VARCHAR(10), f CHAR(3), `h i` BIGINT COMMENT 'hello: there', "
        "`#tag` INT, "
        "p STRING, q DATE) USING parquet PARTITIONED BY (p, q)"
    )
    spark.sql(f"CREATE VIEW {schema}.described_view AS SELECT a, `h i` FROM {schema}.described")
    for name in (f"{schema}.described", f"{schema}.described_view"):
        listed = [(c.name, c.dataType, c.isPartition, c.description) for c in spark.catalog.listColumns(name)]
        described = [(c.name, c.data_type, c.is_partition, c.comment) for c in engine.catalog.catalog_columns(name)]
        assert described == listed
    assert engine.catalog.partition_columns(f"{schema}.described") == ["p", "q"]
