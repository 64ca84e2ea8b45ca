"""``overwrite_interval(fresh=True)`` on a table created empty for the write: the same table as without it."""

from datetime import date, datetime
from dagster_sparkmesh.engine.partition_sql import TimeWindow


def _query(days: dict[str, list[int]]) -> str:
    rows = [f"({i}, DATE'{ds}')" for ds, ids in days.items() for i in ids]
    return f"SELECT * FROM VALUES {', '.join(rows)} AS t(id, ds)"


def _write(engine, table: str, fresh: bool) -> int:
    query = _query({"2024-01-01": [1, 2], "2024-01-02": [3], "2024-01-05": [9]})  # day 5 is outside the window
    engine.creation.create_table_like_query(table, query, ["ds"])
    return engine.overwrite_interval(
        table, query, TimeWindow("ds", datetime(2024, 1, 1), datetime(2024, 1, 4)), fresh=fresh
    )


def test_fresh_write_gives_the_same_rows_and_partitions_as_the_checked_write(engine, schema):
    assert _write(engine, f"{schema}.fresh", fresh=True) == 3
    assert _write(engine, f"{schema}.checked", fresh=False) == 3
    expected = [(1, date(2024, 1, 1)), (2, date(2024, 1, 1)), (3, date(2024, 1, 2))]
    for table in (f"{schema}.fresh", f"{schema}.checked"):
        assert engine.catalog.query_rows(f"SELECT id, ds FROM {table} ORDER BY ds, id") == expected
        assert [r[0] for r in engine.catalog.query_rows(f"SHOW PARTITIONS {table}")] == ["ds=2024-01-01", "ds=2024-01-02"]


def test_a_later_write_to_the_same_table_still_clears_days_that_became_empty(engine, schema):
    table = f"{schema}.daily"
    _write(engine, table, fresh=True)
    engine.overwrite_interval(
        table, _query({"2024-01-02": [4]}), TimeWindow("ds", datetime(2024, 1, 1), datetime(2024, 1, 3))
    )
    assert engine.catalog.query_rows(f"SELECT id, ds FROM {table} ORDER BY ds, id") == [(4, date(2024, 1, 2))]


def test_a_table_created_for_the_write_gets_each_value_in_its_own_column(engine, schema):
    # The time column comes first in the query and last in the table: the write must line the columns up by name.
    table = f"{schema}.created_here"
    query = "SELECT * FROM VALUES (DATE'2024-01-01', 1, 'a'), (DATE'2024-01-02', 2, 'b') AS t(ds, id, name)"
    window = TimeWindow("ds", datetime(2024, 1, 1), datetime(2024, 1, 3))
    assert engine.creation.create_interval_table(table, query, window) is True
    assert engine.overwrite_interval(table, query, window, fresh=True) == 2
    assert [name for name, _ in engine.catalog.columns(table)] == ["id", "name", "ds"]
    assert engine.catalog.query_rows(f"SELECT id, name, ds FROM {table} ORDER BY id") == [
        (1, "a", date(2024, 1, 1)),
        (2, "b", date(2024, 1, 2)),
    ]
