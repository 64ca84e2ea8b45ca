"""Writers racing to create the same interval table: exactly one creates it, the others write into it, none fails."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from dagster_sparkmesh.engine.partition_sql import TimeWindow

QUERY = "SELECT DATE'{day}' AS ds, {n} AS n"


def _window(day: int) -> TimeWindow:
    return TimeWindow("ds", datetime(2024, 1, day), datetime(2024, 1, day + 1))


def test_a_second_create_finds_the_table_and_leaves_its_rows(engine, schema):
    table = f"{schema}.daily"
    assert engine.creation.create_interval_table(table, QUERY.format(day="2024-01-01", n=1), _window(1)) is True
    assert engine.overwrite_interval(table, QUERY.format(day="2024-01-01", n=1), _window(1), fresh=True) == 1

    assert engine.creation.create_interval_table(table, QUERY.format(day="2024-01-02", n=2), _window(2)) is False
    assert engine.catalog.query_rows(f"SELECT CAST(ds AS STRING), n FROM {table}") == [("2024-01-01", 1)]
    assert engine.catalog.partition_columns(table) == ["ds"]


def test_racing_writers_create_once_and_every_day_keeps_its_rows(engine, schema):
    table = f"{schema}.raced"

    def writer(day: int) -> bool:
        query = QUERY.format(day=f"2024-01-0{day}", n=day)
        created = engine.creation.create_interval_table(table, query, _window(day))
        engine.overwrite_interval(table, query, _window(day), fresh=created)
        return created

    with ThreadPoolExecutor(max_workers=3) as pool:
        created = list(pool.map(writer, (1, 2, 3)))

    assert sorted(created) == [False, False, True]
    rows = engine.catalog.query_rows(f"SELECT CAST(ds AS STRING), n FROM {table} ORDER BY ds")
    assert rows == [("2024-01-01", 1), ("2024-01-02", 2), ("2024-01-03", 3)]
