"""Writes that count their rows as they write them (an observation), instead of a second job counting the table."""

from datetime import datetime
from types import SimpleNamespace

import pytest

from dagster_sparkmesh.engine import counted_writes
from dagster_sparkmesh.engine.counted_writes import create_counting, insert_counting
from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.errors import EngineError

# A cross join makes Spark run the write adaptively.
JOINED = "SELECT a.id, DATE'2024-01-01' + CAST(a.id % 3 AS INT) AS ds FROM RANGE(40) a CROSS JOIN RANGE(3) b"


def test_an_insert_counts_the_rows_it_wrote_also_when_run_adaptively(engine, schema):
    table = f"{schema}.written"
    engine.catalog.execute(f"CREATE TABLE {table} (id BIGINT, ds DATE) USING parquet PARTITIONED BY (ds)")
    assert insert_counting(engine.spark, table, JOINED, overwrite=True) == 120
    assert insert_counting(engine.spark, table, "SELECT 7, DATE'2024-01-09'", overwrite=True) == 1
    assert engine.catalog.row_count(table) == 121  # dynamic overwrite kept the three days of the first write
    assert insert_counting(engine.spark, table, f"{JOINED} WHERE 1 = 0") == 0  # an empty write reports 0, no hang


def test_an_insert_counts_only_the_rows_matching_its_predicate(engine, schema):
    table = f"{schema}.some_counted"
    engine.catalog.execute(f"CREATE TABLE {table} (id BIGINT, ds DATE) USING parquet")
    assert insert_counting(engine.spark, table, JOINED, counted="ds = DATE'2024-01-02'") == 39  # ids 1, 4, .. x 3
    assert engine.catalog.row_count(table) == 120


def test_a_ctas_counts_its_rows_and_fails_like_the_statement_when_the_table_exists(engine, schema):
    table = f"{schema}.created"
    assert create_counting(engine.spark, table, JOINED, ["ds"]) == 120
    assert engine.catalog.partition_columns(table) == ["ds"] and engine.catalog.row_count(table) == 120
    with pytest.raises(EngineError, match="TABLE_OR_VIEW_ALREADY_EXISTS") as raised:
        create_counting(engine.spark, table, JOINED)
    assert "CREATE TABLE" in raised.value.snippet


def test_a_count_the_session_does_not_deliver_makes_the_writer_count_the_table(engine, schema, monkeypatch):
    table = f"{schema}.undelivered"
    engine.creation.create_table_like_query(table, JOINED, ["ds"])
    monkeypatch.setattr(counted_writes, "_delivered", lambda observation, checks: None)
    window = TimeWindow("ds", datetime(2024, 1, 2), datetime(2024, 1, 4))
    assert engine.overwrite_interval(table, JOINED, window, fresh=True) == 78  # counted by a second job
    assert engine.catalog.row_count(table) == 78


def test_an_observation_that_never_arrives_is_waited_for_only_so_long(monkeypatch):
    monkeypatch.setattr(counted_writes, "_DELIVERY_WAIT_SECONDS", 0.05)
    pending = SimpleNamespace(future=lambda: SimpleNamespace(isCompleted=lambda: False))
    assert counted_writes._delivered(SimpleNamespace(_jo=pending), None) is None


def test_a_fresh_interval_write_returns_the_rows_inside_its_window(engine, schema):
    table = f"{schema}.fresh_count"
    engine.creation.create_table_like_query(table, JOINED, ["ds"])
    window = TimeWindow("ds", datetime(2024, 1, 2), datetime(2024, 1, 4))  # two of the three days
    assert engine.overwrite_interval(table, JOINED, window, fresh=True) == 78  # ids 1, 4, .. and 2, 5, ..: 13 + 13, three times
    assert engine.catalog.row_count(table) == 78
