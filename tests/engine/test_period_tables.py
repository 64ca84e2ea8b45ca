"""Period tables (``engine.period_tables``): rows partitioned by month behind a view of the model's columns; an
interval write replaces exactly the interval, also inside a month that holds other days."""

from datetime import date, datetime

import pytest

from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.engine.period_tables import periods_touched
from dagster_sparkmesh.errors import EngineError


def _daily(days: dict[str, list[int]]) -> str:
    rows = [f"({i}, DATE'{ds}')" for ds, ids in days.items() for i in ids]
    if not rows:
        return "SELECT CAST(NULL AS INT) AS id, CAST(NULL AS DATE) AS ds WHERE 1 = 0"
    return f"SELECT * FROM VALUES {', '.join(rows)} AS t(id, ds)"


def _window(start: str, end: str, period: str = "month") -> TimeWindow:
    return TimeWindow("ds", datetime.fromisoformat(start), datetime.fromisoformat(end), period=period)


def _rows(engine, table):
    return engine.query_rows(f"SELECT * FROM {table} ORDER BY ds, id")


def _partitions(engine, table):
    return [row[0] for row in engine.query_rows(f"SHOW PARTITIONS {table}__data")]


@pytest.fixture
def monthly(engine, schema):
    """Jan 30 - Feb 2 written into a new period table: two month partitions."""
    table = f"{schema}.events__v1"
    window = _window("2024-01-30", "2024-02-03")
    query = _daily({"2024-01-30": [1], "2024-01-31": [2], "2024-02-01": [3], "2024-02-02": [4], "2024-02-05": [9]})
    assert engine.create_interval_table(table, query, window) is True
    assert engine.overwrite_interval(table, query, window, fresh=True) == 4
    return table


def test_a_new_table_holds_month_partitions_behind_a_view_of_the_model_columns(engine, monthly):
    assert engine.columns(monthly) == [("id", "int"), ("ds", "date")]
    assert engine.view_exists(monthly) and engine.table_exists(f"{monthly}__data")
    assert _partitions(engine, monthly) == ["sparkmesh_month=2024-01-01", "sparkmesh_month=2024-02-01"]
    assert _rows(engine, monthly) == [
        (1, date(2024, 1, 30)), (2, date(2024, 1, 31)), (3, date(2024, 2, 1)), (4, date(2024, 2, 2))
    ]


def test_one_day_inside_a_month_replaces_that_day_only(engine, monthly):
    written = engine.overwrite_interval(monthly, _daily({"2024-01-31": [20, 21]}), _window("2024-01-31", "2024-02-01"))
    assert written == 2
    assert _rows(engine, monthly) == [
        (1, date(2024, 1, 30)), (20, date(2024, 1, 31)), (21, date(2024, 1, 31)),
        (3, date(2024, 2, 1)), (4, date(2024, 2, 2)),
    ]


def test_a_now_empty_interval_is_cleared_and_an_emptied_month_dropped(engine, monthly):
    assert engine.overwrite_interval(monthly, _daily({}), _window("2024-01-30", "2024-02-02")) == 0
    assert _rows(engine, monthly) == [(4, date(2024, 2, 2))]
    assert _partitions(engine, monthly) == ["sparkmesh_month=2024-02-01"]
    # Idempotent.
    assert engine.overwrite_interval(monthly, _daily({}), _window("2024-01-30", "2024-02-02")) == 0
    assert _rows(engine, monthly) == [(4, date(2024, 2, 2))]


def test_a_query_reading_its_own_table_sees_the_rows_before_the_write(engine, monthly):
    # A self-referencing model: the next day is computed from the table's previous rows.
    query = f"SELECT MAX(id) + 1 AS id, DATE'2024-02-03' AS ds FROM {monthly}"
    assert engine.overwrite_interval(monthly, query, _window("2024-02-03", "2024-02-04")) == 1
    assert _rows(engine, monthly)[-2:] == [(4, date(2024, 2, 2)), (5, date(2024, 2, 3))]


def test_a_new_month_is_written_straight_and_old_months_are_untouched(engine, monthly):
    assert engine.overwrite_interval(monthly, _daily({"2024-03-01": [7]}), _window("2024-03-01", "2024-03-02")) == 1
    assert len(_rows(engine, monthly)) == 5
    assert _partitions(engine, monthly)[-1] == "sparkmesh_month=2024-03-01"


def test_a_string_time_column_keeps_partitions_of_its_own_values(engine, schema):
    table = f"{schema}.strings__v1"
    query = "SELECT 1 AS id, '2024-01-01' AS ds"
    window = _window("2024-01-01", "2024-01-02")
    engine.create_interval_table(table, query, window)
    assert engine.overwrite_interval(table, query, window, fresh=True) == 1
    assert engine.table_exists(table) and engine.partition_columns(table) == ["ds"]


def test_a_query_column_named_like_the_hidden_column_is_refused(engine, schema):
    with pytest.raises(EngineError, match="hidden period column"):
        engine.create_interval_table(
            f"{schema}.bad__v1", "SELECT DATE'2024-01-01' AS ds, 1 AS sparkmesh_month", _window("2024-01-01", "2024-01-02")
        )


def test_drop_physical_removes_the_view_and_its_data_table(engine, monthly):
    engine.drop_physical(monthly, is_view=False)
    assert not engine.physical_exists(monthly) and not engine.physical_exists(f"{monthly}__data")


@pytest.mark.parametrize(
    ("start", "end", "period", "expected"),
    [
        ("2024-01-01", "2024-01-02", "month", ["2024-01-01"]),
        ("2024-01-15", "2024-03-01", "month", ["2024-01-01", "2024-02-01"]),
        ("2023-12-31", "2024-01-01 00:00:01", "month", ["2023-12-01", "2024-01-01"]),
        ("2024-01-01 06:00", "2024-01-02 06:00", "day", ["2024-01-01", "2024-01-02"]),
        ("2024-01-01 05:00", "2024-01-01 06:00", "day", ["2024-01-01"]),
    ],
)
def test_periods_touched_by_a_window(start, end, period, expected):
    assert [p.isoformat() for p in periods_touched(_window(start, end), period)] == expected
