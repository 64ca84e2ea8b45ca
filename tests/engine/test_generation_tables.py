"""Generation tables (``engine.generation_tables``): a FULL model's rows as immutable generations behind its view;
a write appends a generation and switches the view, so no reader ever finds the table empty."""

from datetime import timedelta

import pytest

from dagster_sparkmesh.engine import period_segments
from dagster_sparkmesh.engine.generation_tables import (
    GENERATIONS, create_empty_generation_table, create_generation_table, full_table_layout, replace_generation,
)
from dagster_sparkmesh.errors import EngineError


def _ids(engine, table):
    return [row[0] for row in engine.catalog.query_rows(f"SELECT id FROM {table} ORDER BY id")]


def _generations(engine, table):
    return sorted({row[0].split("/")[0] for row in engine.catalog.query_rows(f"SHOW PARTITIONS {table}__data")})


@pytest.fixture
def full(engine, schema):
    table = f"{schema}.totals__v1"
    assert create_generation_table(engine, table, "SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(id, name)") == 2
    return table


@pytest.fixture
def no_grace(monkeypatch):
    monkeypatch.setattr(period_segments, "RETIRED_SEGMENT_GRACE", timedelta(0))


def test_the_first_write_is_one_generation_behind_a_view_of_the_query_columns(engine, full):
    assert engine.catalog.view_exists(full) and engine.catalog.table_exists(f"{full}__data")
    assert engine.catalog.columns(full) == [("id", "int"), ("name", "string")]
    assert full_table_layout(engine, full) == GENERATIONS
    assert len(_generations(engine, full)) == 1 and _ids(engine, full) == [1, 2]


@pytest.mark.classic_only  # a classic DataFrame is analysed when made; over Connect, when it runs
def test_a_write_switches_the_view_to_a_new_generation_and_keeps_the_old_one_for_readers(engine, full):
    before = engine.spark.sql(f"SELECT id FROM {full} ORDER BY id")  # analysed now, run after the write
    assert replace_generation(engine, full, "SELECT * FROM VALUES (3, 'c') AS t(id, name)") == 1
    assert _ids(engine, full) == [3]
    assert [row[0] for row in before.collect()] == [1, 2]
    assert len(_generations(engine, full)) == 2


def test_a_retired_generation_is_dropped_by_a_later_write_once_the_grace_has_passed(engine, full, no_grace):
    first = _generations(engine, full)
    replace_generation(engine, full, "SELECT 3 AS id, 'c' AS name")
    replace_generation(engine, full, "SELECT 4 AS id, 'd' AS name")
    left = _generations(engine, full)
    assert len(left) == 2 and not set(first) & set(left)  # the current one and the one it just retired
    assert _ids(engine, full) == [4]


def test_a_generation_no_view_named_is_dropped_at_once(engine, full):
    engine.catalog.execute(f"INSERT INTO {full}__data SELECT 9, 'crashed', '9999999999999abcdef012'")
    assert _ids(engine, full) == [1, 2]
    replace_generation(engine, full, "SELECT 3 AS id, 'c' AS name")
    assert "sparkmesh_generation=9999999999999abcdef012" not in _generations(engine, full)
    assert len(_generations(engine, full)) == 2


def test_a_crash_between_the_data_table_and_the_view_is_mended_by_the_next_write(engine, full):
    engine.catalog.drop_view(full)
    assert full_table_layout(engine, full) is None
    assert create_generation_table(engine, full, "SELECT 5 AS id, 'e' AS name") is None  # its data table exists
    assert replace_generation(engine, full, "SELECT 5 AS id, 'e' AS name") == 1
    assert engine.catalog.view_exists(full) and _ids(engine, full) == [5]


def test_the_model_partitions_go_under_the_generation(engine, schema, no_grace):
    table = f"{schema}.parts__v1"
    query = "SELECT * FROM VALUES (1, 'x'), (2, 'y') AS t(id, region)"
    assert create_generation_table(engine, table, query, ["region"]) == 2
    replace_generation(engine, table, "SELECT 3 AS id, 'x' AS region")
    replace_generation(engine, table, "SELECT 4 AS id, 'z' AS region")
    partitions = [row[0] for row in engine.catalog.query_rows(f"SHOW PARTITIONS {table}__data")]
    assert len(partitions) == 2 and all(p.split("/")[1] in ("region=x", "region=z") for p in partitions)
    assert engine.catalog.query_rows(f"SELECT * FROM {table}") == [(4, "z")]


def test_a_partitioned_table_shows_the_query_columns_in_the_query_order(engine, schema):
    # Spark keeps partition columns last: the view showed (name, category) for a query of (category, name), and a
    # reader's SELECT * UNION ALL by position put each value under the other column.
    table = f"{schema}.ordered__v1"
    assert create_generation_table(engine, table, "SELECT 'cat1' AS category, 'name1' AS name", ["category"]) == 1
    assert engine.catalog.columns(table) == [("category", "string"), ("name", "string")]
    assert engine.catalog.query_rows(f"SELECT * FROM {table} UNION ALL SELECT 'cat2', 'name2'") == [
        ("cat1", "name1"), ("cat2", "name2")
    ]
    replace_generation(engine, table, "SELECT 'cat3' AS category, 'name3' AS name")
    assert engine.catalog.query_rows(f"SELECT * FROM {table}") == [("cat3", "name3")]
    empty = f"{schema}.ordered_empty__v1"
    create_empty_generation_table(engine, empty, "SELECT 'c' AS category, 'n' AS name", ["category"])
    assert engine.catalog.columns(empty) == [("category", "string"), ("name", "string")]


def test_a_model_reading_its_own_table_starts_from_an_empty_one(engine, schema):
    table = f"{schema}.counter__v1"
    create_empty_generation_table(engine, table, "SELECT 1 AS id, 'n' AS name")
    assert _ids(engine, table) == []
    query = f"SELECT COALESCE(MAX(id), 0) + 1 AS id, 'n' AS name FROM {table}"
    replace_generation(engine, table, query)
    replace_generation(engine, table, query)
    assert _ids(engine, table) == [2]


def test_a_model_reading_its_own_table_after_a_crash_before_its_view_starts_from_an_empty_one(engine, full):
    engine.catalog.drop_view(full)  # the data table holds a generation no view ever named (its write was never recorded)
    create_empty_generation_table(engine, full, "SELECT 1 AS id, 'n' AS name")
    assert engine.catalog.view_exists(full) and _ids(engine, full) == []


def test_a_query_column_named_like_the_hidden_column_is_refused(engine, schema):
    with pytest.raises(EngineError, match="hidden column"):
        create_generation_table(engine, f"{schema}.bad__v1", "SELECT 1 AS sparkmesh_generation")
    assert not engine.catalog.physical_exists(f"{schema}.bad__v1__data")


def test_a_new_generation_counts_row_checks_only_when_the_table_keeps_the_querys_values(engine, full):
    """``id`` is an INT in the table: a query's BIGINT ids are cast by the insert, so what was counted is not
    what the table keeps, and the checks are left to the audits."""
    from dagster_sparkmesh.engine.counted_writes import RowChecks

    same = RowChecks({0: "id IS NULL", 1: "id > 3"})
    replace_generation(engine, full, "SELECT * FROM VALUES (3, 'c'), (4, 'd') AS t(id, name)", same)
    assert same.holding == {0: 0, 1: 1}
    wider = RowChecks({0: "id IS NULL"})
    replace_generation(engine, full, "SELECT * FROM VALUES (CAST(5 AS BIGINT), 'e') AS t(id, name)", wider)
    assert wider.holding == {} and _ids(engine, full) == [5]
