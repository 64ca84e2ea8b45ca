from datetime import date, datetime
from decimal import Decimal

import pytest

from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.model.merge_clauses import MergeRules
from dagster_sparkmesh.project.sql.merge_properties import read_when_matched


def _rows(engine, table, order="ds, id"):
    return engine.catalog.query_rows(f"SELECT * FROM {table} ORDER BY {order}")


def _daily(days: dict[str, list[int]]) -> str:
    """A query returning rows (id, ds) for the given days; an empty dict gives an empty typed result."""
    rows = [f"({i}, DATE'{ds}')" for ds, ids in days.items() for i in ids]
    if not rows:
        return "SELECT CAST(NULL AS INT) AS id, CAST(NULL AS DATE) AS ds WHERE 1 = 0"
    return f"SELECT * FROM VALUES {', '.join(rows)} AS t(id, ds)"


@pytest.fixture
def daily_table(engine, schema):
    table = f"{schema}.daily"
    engine.creation.create_table_like_query(table, _daily({"2024-01-01": [1]}), ["ds"])
    written = engine.overwrite_interval(
        table,
        _daily({"2024-01-01": [1, 2], "2024-01-02": [3], "2024-01-03": [4], "2024-01-04": [5]}),
        TimeWindow("ds", datetime(2024, 1, 1), datetime(2024, 1, 5)),
    )
    assert written == 5
    return table


def test_interval_overwrite_replaces_exactly_the_interval_including_a_now_empty_day(engine, daily_table):
    # Days 2 and 3 are recomputed: day 2 changes, day 3 now has no rows; days 1 and 4 are outside.
    new_rows = _daily({"2024-01-02": [30, 31], "2024-01-04": [99]})  # day 4 is outside: must be ignored
    written = engine.overwrite_interval(
        daily_table, new_rows, TimeWindow("ds", datetime(2024, 1, 2), datetime(2024, 1, 4))
    )
    assert written == 2
    expected = [(1, date(2024, 1, 1)), (2, date(2024, 1, 1)), (30, date(2024, 1, 2)), (31, date(2024, 1, 2)),
                (5, date(2024, 1, 4))]
    assert _rows(engine, daily_table) == expected
    # Idempotent: the same interval again leaves the same table.
    engine.overwrite_interval(
        daily_table, new_rows, TimeWindow("ds", datetime(2024, 1, 2), datetime(2024, 1, 4))
    )
    assert _rows(engine, daily_table) == expected
    assert [row[0] for row in engine.catalog.query_rows(f"SHOW PARTITIONS {daily_table}")] == [
        "ds=2024-01-01", "ds=2024-01-02", "ds=2024-01-04"
    ]


def test_interval_overwrite_with_an_entirely_empty_result_clears_the_interval(engine, daily_table):
    written = engine.overwrite_interval(
        daily_table, _daily({}), TimeWindow("ds", datetime(2024, 1, 1), datetime(2024, 1, 4))
    )
    assert written == 0
    assert _rows(engine, daily_table) == [(5, date(2024, 1, 4))]


def test_hourly_interval_on_a_string_hour_column(engine, schema):
    table = f"{schema}.hourly"

    def hours(*pairs):
        return "SELECT * FROM VALUES " + ", ".join(f"({v}, '{h}')" for v, h in pairs) + " AS t(v, hour)"

    engine.creation.create_table_like_query(table, hours((0, "2024-01-01 00")), ["hour"])
    engine.overwrite_interval(
        table, hours((1, "2024-01-01 00"), (2, "2024-01-01 01"), (3, "2024-01-01 02")), TimeWindow("hour", datetime(2024, 1, 1, 0), datetime(2024, 1, 1, 3), "yyyy-MM-dd HH"),
    )
    engine.overwrite_interval(
        table, hours((9, "2024-01-01 02")), TimeWindow("hour", datetime(2024, 1, 1, 1), datetime(2024, 1, 1, 3), "yyyy-MM-dd HH"),
    )
    assert _rows(engine, table, "hour") == [(1, "2024-01-01 00"), (9, "2024-01-01 02")]


def test_interval_overwrite_refuses_an_unpartitioned_table(engine, schema):
    table = f"{schema}.flat"
    engine.creation.create_table_like_query(table, _daily({"2024-01-01": [1]}), [])
    with pytest.raises(EngineError, match="not partitioned by ds"):
        engine.overwrite_interval(
            table, _daily({}), TimeWindow("ds", datetime(2024, 1, 1), datetime(2024, 1, 2))
        )


def test_replace_full_replaces_all_rows_and_stale_partitions(engine, schema):
    table = f"{schema}.full"
    engine.creation.create_table_like_query(table, _daily({"2024-01-01": [1]}), ["ds"])
    assert engine.replace_full(table, _daily({"2024-01-01": [1], "2024-01-02": [2]})) == 2
    assert engine.replace_full(table, _daily({"2024-01-02": [3]})) == 1
    assert _rows(engine, table) == [(3, date(2024, 1, 2))]


def test_upsert_by_key_updates_matching_keys_and_keeps_the_rest(engine, schema):
    table = f"{schema}.customers"
    query = "SELECT * FROM VALUES {} AS t(id, name, region)"
    engine.creation.create_table_like_query(table, query.format("(1, 'a', 'eu')"), [])
    engine.upsert_by_key(table, query.format("(1, 'a', 'eu'), (2, 'b', 'us')"), ["id"])
    written = engine.upsert_by_key(table, query.format("(2, 'b2', 'eu'), (3, 'c', 'us')"), ["id"])
    assert written == 2
    assert _rows(engine, table, "id") == [(1, "a", "eu"), (2, "b2", "eu"), (3, "c", "us")]
    assert not engine.catalog.table_exists(table + "__sm_upsert")


def test_upsert_on_a_partitioned_table_moves_a_key_between_partitions(engine, schema):
    table = f"{schema}.by_region"
    query = "SELECT * FROM VALUES {} AS t(id, name, region)"
    engine.creation.create_table_like_query(table, query.format("(1, 'a', 'eu')"), ["region"])
    engine.upsert_by_key(table, query.format("(1, 'a', 'eu'), (2, 'b', 'us')"), ["id"])
    engine.upsert_by_key(table, query.format("(1, 'a', 'us')"), ["id"])
    assert _rows(engine, table, "id") == [(1, "a", "us"), (2, "b", "us")]
    assert [row[0] for row in engine.catalog.query_rows(f"SHOW PARTITIONS {table}")] == ["region=us"]


def test_upsert_finishes_a_copy_interrupted_by_a_crash(engine, schema):
    """A crash after staging was complete but during the copy: the staging table holds every row."""
    table = f"{schema}.crashy"
    query = "SELECT * FROM VALUES {} AS t(id, name)"
    engine.creation.create_table_like_query(table, query.format("(1, 'a')"), [])
    engine.upsert_by_key(table, query.format("(1, 'a'), (2, 'b')"), ["id"])
    engine.catalog.execute(f"CREATE TABLE {table}__sm_upsert USING parquet AS SELECT * FROM {table}")
    engine.catalog.execute(f"TRUNCATE TABLE {table}")  # the target lost its rows mid-copy
    engine.upsert_by_key(table, query.format("(3, 'c')"), ["id"])
    assert _rows(engine, table, "id") == [(1, "a"), (2, "b"), (3, "c")]


def test_load_seed_casts_values_to_declared_types_and_replaces_content(engine, schema):
    table = f"{schema}.seed"
    columns = [("id", "INT"), ("price", "DECIMAL(10,2)"), ("day", "DATE"), ("at", "TIMESTAMP"), ("ok", "BOOLEAN"),
               ("name", "STRING")]
    rows = [(1, Decimal("1.50"), date(2024, 1, 1), datetime(2024, 1, 1, 5, 30), True, "x"),
            (2, None, None, None, False, None)]
    assert engine.load_seed(table, columns, rows) == 2
    assert engine.catalog.columns(table) == [("id", "int"), ("price", "decimal(10,2)"), ("day", "date"),
                                     ("at", "timestamp"), ("ok", "boolean"), ("name", "string")]
    assert _rows(engine, table, "id") == [
        (1, Decimal("1.50"), date(2024, 1, 1), datetime(2024, 1, 1, 5, 30), True, "x"),
        (2, None, None, None, False, None),
    ]
    engine.load_seed(table, columns, rows[:1])
    assert engine.catalog.row_count(table) == 1


def test_bad_seed_value_is_an_engine_error(engine, schema):
    with pytest.raises(EngineError, match="CAST_INVALID_INPUT"):
        engine.load_seed(f"{schema}.bad_seed", [("id", "INT")], [("not a number",)])


def test_write_dataframe_creates_then_replaces(engine, schema, spark):
    table = f"{schema}.py_model"
    frame = spark.createDataFrame([(1, "2024-01-01"), (2, "2024-01-02")], "id INT, ds STRING")
    assert engine.write_dataframe(table, frame, partitioned_by=["ds"]) == 2
    assert engine.write_dataframe(table, frame.where("id = 2")) == 1
    assert _rows(engine, table) == [(2, "2024-01-02")]


def test_temp_view_for_unit_test_inputs(engine):
    engine.catalog.create_temp_view("unit_input", [("id", "BIGINT"), ("ds", "DATE")], [(1, "2024-01-01")])
    try:
        assert engine.catalog.query_rows("SELECT * FROM unit_input") == [(1, date(2024, 1, 1))]
    finally:  # the suite shares the session: a temp view would show in every later test's schema listing
        engine.catalog.drop_temp_view("unit_input")


def _partitions(engine, table):
    return [row[0] for row in engine.catalog.query_rows(f"SHOW PARTITIONS {table}")]


def test_one_day_overwrite_names_the_partition_and_drops_a_day_left_empty(engine, daily_table):
    day_two = TimeWindow("ds", datetime(2024, 1, 2), datetime(2024, 1, 3))
    # Rows of other days in the query never reach the table: only the window's rows are written.
    written = engine.overwrite_interval(daily_table, _daily({"2024-01-02": [20, 21], "2024-01-03": [99]}), day_two)
    assert written == 2
    assert [tuple(r) for r in _rows(engine, daily_table)] == [
        (1, date(2024, 1, 1)), (2, date(2024, 1, 1)), (20, date(2024, 1, 2)), (21, date(2024, 1, 2)),
        (4, date(2024, 1, 3)), (5, date(2024, 1, 4)),
    ]
    assert engine.overwrite_interval(daily_table, _daily({"2024-01-03": [7]}), day_two) == 0
    assert "ds=2024-01-02" not in _partitions(engine, daily_table)
    assert [r[0] for r in _rows(engine, daily_table)] == [1, 2, 4, 5]


def test_one_day_overwrite_of_a_query_reading_the_table_itself(engine, daily_table):
    reads_itself = f"SELECT id + 100 AS id, DATE'2024-01-04' AS ds FROM {daily_table} WHERE ds = DATE'2024-01-03'"
    window = TimeWindow("ds", datetime(2024, 1, 4), datetime(2024, 1, 5))
    assert engine.overwrite_interval(daily_table, reads_itself, window) == 1
    assert [r[0] for r in _rows(engine, daily_table)] == [1, 2, 3, 4, 104]


KEYED = "SELECT * FROM VALUES {} AS t(id, name, amount, updated_at)"


def _keyed_table(engine, schema, name="keyed"):
    table = f"{schema}.{name}"
    initial = KEYED.format("(1, 'a', 10, 1), (2, 'b', 20, 1), (3, 'c', 30, 1), (4, 'd', 40, 1)")
    engine.creation.create_table_like_query(table, initial, [])
    engine.upsert_by_key(table, initial, ["id"])
    return table


def test_when_matched_updates_only_what_its_clauses_say_and_deletes_as_told(engine, schema):
    # SQLMesh's when_matched: the first clause whose condition holds applies; none holding keeps the row.
    table = _keyed_table(engine, schema)
    rules = MergeRules(when_matched=read_when_matched(
        "(WHEN MATCHED AND source.amount < 0 THEN DELETE "
        "WHEN MATCHED AND source.updated_at > target.updated_at THEN UPDATE SET target.amount = source.amount, "
        "name = COALESCE(source.name, target.name))", "spark", _refused))
    new = KEYED.format("(1, NULL, 11, 2), (2, 'b2', 21, 0), (3, 'c3', -1, 2), (5, 'e', 50, 2)")
    engine.upsert_by_key(table, new, ["id"], rules)
    assert _rows(engine, table, "id") == [(1, "a", 11, 1), (2, "b", 20, 1), (4, "d", 40, 1), (5, "e", 50, 2)]


def test_merge_filter_narrows_the_matches_and_an_unmatched_key_is_added(engine, schema):
    # A key whose pair fails the filter is not matched: the table keeps its row and the new one is added, as in
    # MERGE INTO with the filter in its ON.
    table = _keyed_table(engine, schema, "filtered")
    rules = MergeRules(merge_filter="target.amount >= 20")
    engine.upsert_by_key(table, KEYED.format("(1, 'a1', 11, 2), (2, 'b2', 21, 2)"), ["id"], rules)
    assert _rows(engine, table, "id, amount") == [
        (1, "a", 10, 1), (1, "a1", 11, 2), (2, "b2", 21, 2), (3, "c", 30, 1), (4, "d", 40, 1)
    ]


def test_when_matched_setting_a_column_the_table_lacks_is_refused_as_merge_into_refuses_it(engine, schema):
    table = _keyed_table(engine, schema, "typo")
    rules = MergeRules(when_matched=read_when_matched("WHEN MATCHED THEN UPDATE SET target.amout = source.amount",
                                                      "spark", _refused))
    with pytest.raises(EngineError, match="sets target.amout, a column the table does not have"):
        engine.upsert_by_key(table, KEYED.format("(1, 'a', 11, 2)"), ["id"], rules)
    assert _rows(engine, table, "id")[0] == (1, "a", 10, 1)  # nothing written


def _refused(message, hint):
    return AssertionError(f"{message} ({hint})")
