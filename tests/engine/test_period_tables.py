"""Period tables (``engine.period_tables``): rows partitioned by month behind a view of the model's columns; an
interval write replaces exactly the interval, also inside a month that holds other days."""

from datetime import date, datetime, timedelta

import pytest

from dagster_sparkmesh.engine import period_segments
from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.engine.period_segments import current_values
from dagster_sparkmesh.errors import EngineError


def _daily(days: dict[str, list[int]]) -> str:
    rows = [f"({i}, DATE'{ds}')" for ds, ids in days.items() for i in ids]
    if not rows:
        return "SELECT CAST(NULL AS INT) AS id, CAST(NULL AS DATE) AS ds WHERE 1 = 0"
    return f"SELECT * FROM VALUES {', '.join(rows)} AS t(id, ds)"


def _window(start: str, end: str, period: str = "month") -> TimeWindow:
    return TimeWindow("ds", datetime.fromisoformat(start), datetime.fromisoformat(end), period=period)


def _rows(engine, table):
    return engine.catalog.query_rows(f"SELECT * FROM {table} ORDER BY ds, id")


def _segments(engine, table):
    """The data table's partitions as segment ranges ``start..end`` (versions left out), in order."""
    values = [row[0].split("=", 1)[1] for row in engine.catalog.query_rows(f"SHOW PARTITIONS {table}__data")]
    return sorted(_range(value) for value in values)


def _current(engine, table):
    text = next(r[1] for r in engine.catalog.query_rows(f"DESCRIBE TABLE EXTENDED {table}") if r[0] == "View Text")
    return sorted(_range(value) for value in current_values(text))


def _range(value):
    start, end, _ = value.split("_", 2)
    return f"{start[:8]}..{end[:8]}"


@pytest.fixture
def monthly(engine, schema):
    """Jan 30 - Feb 2 written into a new period table: one segment in each month."""
    table = f"{schema}.events__v1"
    window = _window("2024-01-30", "2024-02-03")
    query = _daily({"2024-01-30": [1], "2024-01-31": [2], "2024-02-01": [3], "2024-02-02": [4], "2024-02-05": [9]})
    assert engine.creation.create_interval_table(table, query, window) is True
    assert engine.overwrite_interval(table, query, window, fresh=True) == 4
    return table


@pytest.fixture
def no_grace(monkeypatch):
    monkeypatch.setattr(period_segments, "RETIRED_SEGMENT_GRACE", timedelta(0))


def test_a_new_table_holds_a_segment_per_month_behind_a_view_of_the_model_columns(engine, monthly):
    assert engine.catalog.columns(monthly) == [("id", "int"), ("ds", "date")]
    assert engine.catalog.view_exists(monthly) and engine.catalog.table_exists(f"{monthly}__data")
    assert _segments(engine, monthly) == _current(engine, monthly) == ["20240130..20240201", "20240201..20240203"]
    assert _rows(engine, monthly) == [
        (1, date(2024, 1, 30)), (2, date(2024, 1, 31)), (3, date(2024, 2, 1)), (4, date(2024, 2, 2))
    ]


def test_the_view_appears_with_the_first_write_also_when_it_has_no_rows(engine, schema):
    table = f"{schema}.late_view__v1"
    window = _window("2024-01-01", "2024-01-03")
    assert engine.creation.create_interval_table(table, _daily({}), window) is True
    assert not engine.catalog.physical_exists(table) and engine.catalog.table_exists(f"{table}__data")  # no view before any row
    assert engine.overwrite_interval(table, _daily({}), window) == 0
    assert engine.catalog.view_exists(table) and _rows(engine, table) == [] and _segments(engine, table) == []


def test_a_first_write_creates_the_period_table_with_its_rows_and_the_query_types(engine, schema, monkeypatch):
    table = f"{schema}.written_new__v1"
    window = _window("2024-01-30", "2024-02-02")
    query = "SELECT CAST(id AS BIGINT) AS id, ds FROM (" + _daily({"2024-01-30": [1], "2024-02-01": [2, 3], "2024-02-05": [9]}) + ")"
    analyzed = []
    monkeypatch.setattr(type(engine.catalog), "query_schema", lambda self, sql: analyzed.append(sql))
    # Columns as an analysis over temp views of new parents saw them: they name the columns and type the time
    # column; the table takes the types the query has when it runs (id: bigint, not int).
    assert engine.creation.write_first_interval(table, query, window, columns=[("id", "int"), ("ds", "date")]) == 3
    monkeypatch.undo()
    assert analyzed == []
    assert engine.catalog.columns(table) == [("id", "bigint"), ("ds", "date")]
    assert _segments(engine, table) == _current(engine, table) == ["20240130..20240201", "20240201..20240202"]
    assert [row[0] for row in _rows(engine, table)] == [1, 2, 3]
    later = _window("2024-02-02", "2024-02-03")  # a later write into it
    assert engine.overwrite_interval(table, _daily({"2024-02-02": [4]}), later) == 1
    assert [row[0] for row in _rows(engine, table)] == [1, 2, 3, 4]


def test_a_first_write_leaves_an_existing_data_table_to_the_interval_overwrite(engine, schema):
    """A crash between a first write's CTAS and its view leaves the data table alone: the next first write finds
    it, and the overwrite that follows writes the interval and creates the view."""
    table = f"{schema}.left_behind__v1"
    window = _window("2024-01-01", "2024-01-03")
    query = _daily({"2024-01-01": [1], "2024-01-02": [2]})
    engine.catalog.execute(f"CREATE TABLE {table}__data (id INT, ds DATE, sparkmesh_month STRING) USING parquet "
                   "PARTITIONED BY (sparkmesh_month)")
    assert engine.creation.write_first_interval(table, query, window) is None
    assert engine.creation.create_interval_table(table, query, window) is False
    assert engine.overwrite_interval(table, query, window) == 2
    assert engine.catalog.view_exists(table) and [row[0] for row in _rows(engine, table)] == [1, 2]


def test_a_first_write_of_a_table_partitioned_by_its_own_values_is_left_to_create_and_overwrite(engine, schema):
    table = f"{schema}.by_string__v1"
    window = TimeWindow("ds", datetime(2024, 1, 1), datetime(2024, 1, 2), "yyyy-MM-dd", period="month")
    query = "SELECT 1 AS id, '2024-01-01' AS ds"
    assert engine.creation.write_first_interval(table, query, window) is None
    assert not engine.catalog.table_exists(table) and not engine.catalog.table_exists(f"{table}__data")


def test_a_write_into_a_table_created_under_its_lock_reads_no_view(engine, schema, monkeypatch):
    table = f"{schema}.new__v1"
    window = _window("2024-01-01", "2024-01-03")
    query = _daily({"2024-01-01": [1], "2024-01-02": [2]})
    assert engine.creation.create_interval_table(table, query, window, columns=[("id", "int"), ("ds", "date")]) is True
    described = []
    monkeypatch.setattr(type(engine.catalog), "view_text", lambda self, name: described.append(name))
    assert engine.overwrite_interval(table, query, window, fresh=True, new=True) == 2
    monkeypatch.undo()
    assert described == [] and _current(engine, table) == ["20240101..20240103"]
    assert [row[0] for row in _rows(engine, table)] == [1, 2]


def test_one_day_inside_a_segment_replaces_that_day_only(engine, monthly):
    written = engine.overwrite_interval(monthly, _daily({"2024-01-31": [20, 21]}), _window("2024-01-31", "2024-02-01"))
    assert written == 2
    assert _rows(engine, monthly) == [
        (1, date(2024, 1, 30)), (20, date(2024, 1, 31)), (21, date(2024, 1, 31)),
        (3, date(2024, 2, 1)), (4, date(2024, 2, 2)),
    ]
    # The January segment was rewritten into a new one; the retired one stays for readers until the grace ends.
    assert _current(engine, monthly) == ["20240130..20240201", "20240201..20240203"]
    assert _segments(engine, monthly) == ["20240130..20240201", "20240130..20240201", "20240201..20240203"]


@pytest.mark.classic_only  # a classic DataFrame is analysed when made; over Connect, when it runs
def test_a_reader_that_resolved_the_view_before_a_rewrite_reads_the_rows_before_it(engine, monthly):
    before = engine.spark.sql(f"SELECT id FROM {monthly} ORDER BY id")  # analysed now, run below
    rewrite = _daily({"2024-01-30": [10], "2024-01-31": [11]})
    engine.overwrite_interval(monthly, rewrite, _window("2024-01-30", "2024-02-01"))
    assert [row[0] for row in before.collect()] == [1, 2, 3, 4]
    assert [row[0] for row in engine.spark.sql(f"SELECT id FROM {monthly} ORDER BY id").collect()] == [3, 4, 10, 11]


def test_a_retired_segment_is_dropped_by_a_later_write_once_the_grace_has_passed(engine, monthly, no_grace):
    engine.overwrite_interval(monthly, _daily({"2024-01-31": [20]}), _window("2024-01-31", "2024-02-01"))
    engine.overwrite_interval(monthly, _daily({"2024-02-03": [5]}), _window("2024-02-03", "2024-02-04"))
    assert _segments(engine, monthly) == _current(engine, monthly) == [
        "20240130..20240201", "20240201..20240203", "20240203..20240204"
    ]
    assert [row[0] for row in _rows(engine, monthly)] == [1, 20, 3, 4, 5]


def test_a_now_empty_interval_is_cleared(engine, monthly):
    assert engine.overwrite_interval(monthly, _daily({}), _window("2024-01-30", "2024-02-02")) == 0
    assert _rows(engine, monthly) == [(4, date(2024, 2, 2))]
    # Idempotent.
    assert engine.overwrite_interval(monthly, _daily({}), _window("2024-01-30", "2024-02-02")) == 0
    assert _rows(engine, monthly) == [(4, date(2024, 2, 2))]


def test_a_query_reading_its_own_table_sees_the_rows_before_the_write(engine, monthly):
    # A self-referencing model: the next day is computed from the table's previous rows.
    query = f"SELECT MAX(id) + 1 AS id, DATE'2024-02-03' AS ds FROM {monthly}"
    assert engine.overwrite_interval(monthly, query, _window("2024-02-03", "2024-02-04")) == 1
    assert _rows(engine, monthly)[-2:] == [(4, date(2024, 2, 2)), (5, date(2024, 2, 3))]


def test_a_day_next_to_the_written_ones_is_a_segment_of_its_own_and_nothing_is_rewritten(engine, monthly):
    before = _segments(engine, monthly)
    assert engine.overwrite_interval(monthly, _daily({"2024-02-03": [7]}), _window("2024-02-03", "2024-02-04")) == 1
    assert _segments(engine, monthly) == _current(engine, monthly) == sorted([*before, "20240203..20240204"])
    assert len(_rows(engine, monthly)) == 5


def test_a_month_of_daily_writes_is_merged_before_it_holds_too_many_segments(engine, schema, no_grace):
    table = f"{schema}.daily__v1"
    days = [f"2024-03-{day:02d}" for day in range(1, 13)]
    engine.creation.create_interval_table(table, _daily({days[0]: [1]}), _window(days[0], days[1]))
    for number, day in enumerate(days[:-1], start=1):
        engine.overwrite_interval(table, _daily({day: [number]}), _window(day, days[number]))
        assert len(_current(engine, table)) <= period_segments.MAX_SEGMENTS_PER_PERIOD
    assert [row[0] for row in _rows(engine, table)] == list(range(1, 12))
    # The ninth write merged the first eight days' segments with its own.
    assert _current(engine, table)[0] == "20240301..20240310"


def test_a_segment_no_view_names_is_not_read_and_is_dropped_by_the_next_write_that_retires_one(engine, monthly):
    # A write that crashed before switching the view left its segment behind (newer than the one the view names).
    engine.catalog.execute(
        f"INSERT INTO {monthly}__data SELECT 99, DATE'2024-01-30', '20240130T000000_20240201T000000_9999999999999abc'"
    )
    assert [row[0] for row in _rows(engine, monthly)] == [1, 2, 3, 4]
    engine.overwrite_interval(monthly, _daily({"2024-02-03": [5]}), _window("2024-02-03", "2024-02-04"))
    assert len(_segments(engine, monthly)) == 4  # a write that retires nothing leaves the listing alone
    engine.overwrite_interval(monthly, _daily({"2024-02-02": [6]}), _window("2024-02-02", "2024-02-03"))
    assert _segments(engine, monthly).count("20240130..20240201") == 1 and len(_segments(engine, monthly)) == 4
    assert [row[0] for row in _rows(engine, monthly)] == [1, 2, 3, 6, 5]


def test_a_table_of_the_first_period_layout_is_read_and_written_alike(engine, schema):
    # Whole-month partitions named by their first day, behind a view of the whole data table.
    table = f"{schema}.legacy__v1"
    engine.catalog.execute(
        f"CREATE TABLE {table}__data (id INT, ds DATE, sparkmesh_month STRING) "
        "USING parquet PARTITIONED BY (sparkmesh_month)"
    )
    rows = "(1, DATE'2024-01-01', '2024-01-01'), (2, DATE'2024-01-02', '2024-01-01')"
    engine.catalog.execute(f"INSERT INTO {table}__data VALUES {rows}")
    engine.catalog.execute(f"CREATE VIEW {table} AS SELECT id, ds FROM {table}__data")
    assert engine.overwrite_interval(table, _daily({"2024-01-02": [3]}), _window("2024-01-02", "2024-01-03")) == 1
    assert [row[0] for row in _rows(engine, table)] == [1, 3]
    assert _current(engine, table) == ["20240101..20240201"]


def test_a_string_time_column_keeps_partitions_of_its_own_values(engine, schema):
    table = f"{schema}.strings__v1"
    query = "SELECT 1 AS id, '2024-01-01' AS ds"
    window = _window("2024-01-01", "2024-01-02")
    engine.creation.create_interval_table(table, query, window)
    assert engine.overwrite_interval(table, query, window, fresh=True) == 1
    assert engine.catalog.table_exists(table) and engine.catalog.partition_columns(table) == ["ds"]


def test_a_query_column_named_like_the_hidden_column_is_refused(engine, schema):
    with pytest.raises(EngineError, match="hidden period column"):
        engine.creation.create_interval_table(
            f"{schema}.bad__v1", "SELECT DATE'2024-01-01' AS ds, 1 AS sparkmesh_month", _window("2024-01-01", "2024-01-02")
        )


def test_drop_physical_removes_the_view_and_its_data_table(engine, monthly):
    engine.drop_physical(monthly, is_view=False)
    assert not engine.catalog.physical_exists(monthly) and not engine.catalog.physical_exists(f"{monthly}__data")


@pytest.mark.parametrize("metrics", [True, False], ids=["counted by the write", "count not delivered"])
def test_a_window_without_rows_writes_nothing_and_keeps_the_view(engine, monthly, monkeypatch, metrics):
    from dagster_sparkmesh.engine import counted_writes

    if not metrics:
        monkeypatch.setattr(counted_writes, "_delivered", lambda observation, checks: None)
    before = engine.catalog.view_text(monthly)
    empty = _daily({"2024-02-05": [9]})  # a row outside the window only
    assert engine.overwrite_interval(monthly, empty, _window("2024-02-03", "2024-02-04")) == 0
    assert engine.catalog.view_text(monthly) == before
    assert _segments(engine, monthly) == ["20240130..20240201", "20240201..20240203"]
    one_day = _daily({"2024-02-03": [5, 6]})
    assert engine.overwrite_interval(monthly, one_day, _window("2024-02-03", "2024-02-04")) == 2
    assert engine.catalog.view_text(monthly) != before
    assert _rows(engine, monthly)[-2:] == [(5, date(2024, 2, 3)), (6, date(2024, 2, 3))]


def test_a_write_counts_row_checks_only_when_the_table_keeps_the_querys_values(engine, monthly):
    """``id`` is an INT in the table: a query's BIGINT ids are cast by the insert, so what was counted is not
    what the table keeps, and the checks are left to the audits."""
    from dagster_sparkmesh.engine.counted_writes import RowChecks

    window = _window("2024-02-05", "2024-02-06")
    same = RowChecks({0: "id IS NULL", 1: "id > 3"})
    assert engine.overwrite_interval(monthly, _daily({"2024-02-05": [5, 6]}), window, checks=same) == 2
    assert same.holding == {0: 0, 1: 2}
    wider = RowChecks({0: "id IS NULL"})
    bigint = "SELECT CAST(7 AS BIGINT) AS id, DATE'2024-02-05' AS ds"
    assert engine.overwrite_interval(monthly, bigint, window, checks=wider) == 1
    assert wider.holding == {} and _rows(engine, monthly)[-1] == (7, date(2024, 2, 5))


def test_a_char_column_leaves_the_row_checks_to_the_audits(engine, schema):
    """A char(n) column pads what is written into it, and its type reads as string on both sides: 'ab' counted
    would not be the 'ab   ' the table keeps."""
    from dagster_sparkmesh.engine.counted_writes import RowChecks
    from dagster_sparkmesh.engine.period_tables import PeriodLayout, create_period_table

    table = f"{schema}.codes__v1"
    assert create_period_table(engine.creation, table, PeriodLayout((("code", "char(5)"), ("ds", "date")), "month"))
    assert engine.period_layout(table).pads_strings
    checks = RowChecks({0: "length(code) <> 5"})
    query = "SELECT trim('ab') AS code, DATE'2024-01-02' AS ds"
    assert engine.overwrite_interval(table, query, _window("2024-01-02", "2024-01-03"), checks=checks) == 1
    assert checks.holding == {}
    assert engine.catalog.query_rows(f"SELECT length(code) FROM {table}") == [(5,)]


def _hourly_days(first: str, days: int) -> str:
    """One row at 06:00 of each of ``days`` days from ``first`` (ids 0..days-1)."""
    return (
        f"SELECT CAST(n AS INT) AS id, CAST(DATE'{first}' + CAST(n AS INT) AS TIMESTAMP) + INTERVAL 6 HOURS AS ts "
        f"FROM RANGE({days}) AS t(n)"
    )


def test_an_hourly_model_with_two_years_of_history_is_written_read_and_restated(engine, schema, monkeypatch):
    # A sub-daily model's periods are days: two years of them named one by one overflowed the view text the
    # metastore keeps (32,700 characters in Derby), and the write failed. Its older months are sealed instead (here
    # above 40 segments, for fewer partitions to write: the default's bound is held by test_period_segments).
    monkeypatch.setattr(period_segments, "SEAL_ABOVE", 40)
    table = f"{schema}.hourly__v1"
    window = TimeWindow("ts", datetime(2023, 1, 1), datetime(2024, 12, 1), period="day")
    days = (date(2024, 12, 1) - date(2023, 1, 1)).days
    query = _hourly_days("2023-01-01", days)
    engine.creation.create_interval_table(table, query, window)
    assert engine.overwrite_interval(table, query, window, fresh=True) == days
    current = _current(engine, table)
    assert current[0] == "20230101..20230201" and current[-1] == "20241130..20241201"
    assert len(current) == 22 + 30  # January 2023 to October 2024 sealed, November's days

    # One day restated inside a sealed month: that day's rows replaced, the month's others kept.
    restated = "SELECT -1 AS id, TIMESTAMP'2023-03-05 07:00:00' AS ts"
    restate = TimeWindow("ts", datetime(2023, 3, 5), datetime(2023, 3, 6), period="day")
    assert engine.overwrite_interval(table, restated, restate) == 1
    march = engine.catalog.query_rows(
        f"SELECT id, ts FROM {table} WHERE ts >= '2023-03-04' AND ts < '2023-03-07' ORDER BY ts"
    )
    assert [row[0] for row in march] == [62, -1, 64]
    assert engine.catalog.query_rows(f"SELECT COUNT(*) FROM {table}")[0][0] == days
    assert "20230301..20230401" in _current(engine, table)
