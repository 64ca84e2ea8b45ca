import pytest

from dagster_sparkmesh.errors import EngineError


def test_table_exists_asks_the_catalog_each_time(engine, schema):
    table = f"{schema}.orders"
    assert not engine.catalog.table_exists(table)
    engine.creation.create_table_like_query(table, "SELECT 1 AS id, DATE'2024-01-01' AS ds", ["ds"])
    assert engine.catalog.table_exists(table)
    assert not engine.catalog.view_exists(table)
    engine.catalog.drop_table(table)
    assert not engine.catalog.table_exists(table)


def test_missing_schema_has_no_tables(engine):
    assert engine.catalog.list_tables("no_such_schema_here") == []
    assert engine.catalog.list_schema("no_such_schema_here") is None  # absent, which is not the same as empty


def test_empty_schema_lists_as_an_empty_set(engine, schema):
    assert engine.catalog.list_schema(schema) == set()
    assert not engine.catalog.table_exists("no_such_schema_here.t")


def test_created_table_is_empty_typed_and_keeps_partition_columns_last(engine, schema):
    table = f"{schema}.events"
    engine.creation.create_table_like_query(
        table, "SELECT DATE'2024-01-01' AS ds, CAST(1 AS BIGINT) AS id, 'a' AS name", ["ds"]
    )
    assert engine.catalog.columns(table) == [("id", "bigint"), ("name", "string"), ("ds", "date")]
    assert engine.catalog.partition_columns(table) == ["ds"]
    assert engine.catalog.row_count(table) == 0


def test_list_tables_shows_tables_and_views_but_not_temp_views(engine, schema):
    engine.creation.create_table_like_query(f"{schema}.a", "SELECT 1 AS id", [])
    engine.catalog.create_or_alter_view(f"{schema}.v", f"SELECT * FROM `{schema}`.`a`")
    engine.catalog.create_temp_view("some_temp_view", [("x", "int")], [(1,)])
    assert engine.catalog.list_tables(schema) == ["a", "v"]


def test_drop_schema_restrict_refuses_a_non_empty_schema(engine, schema):
    engine.creation.create_table_like_query(f"{schema}.a", "SELECT 1 AS id", [])
    with pytest.raises(EngineError):
        engine.catalog.drop_schema(schema, cascade=False)
    engine.catalog.drop_schema(schema, cascade=True)
    assert engine.catalog.list_tables(schema) == []


def test_spark_errors_become_engine_errors_with_statement_and_message(engine):
    with pytest.raises(EngineError) as raised:
        engine.catalog.query_rows("SELECT * FROM no_such_schema_x.no_such_table")
    text = str(raised.value)
    assert "TABLE_OR_VIEW_NOT_FOUND" in text
    assert "no_such_schema_x.no_such_table" in raised.value.snippet
    assert "\tat " not in text and "JVM stacktrace" not in text


def test_parse_errors_are_engine_errors(engine):
    with pytest.raises(EngineError, match="PARSE_SYNTAX_ERROR"):
        engine.catalog.query_rows("SELEC 1")


def test_creating_a_table_over_a_stale_folder_in_the_warehouse_succeeds(engine, schema, spark_project):
    from dagster_sparkmesh.engine.settings import warehouse_dir

    stale = warehouse_dir(spark_project) / f"{schema}.db" / "orders"
    stale.mkdir(parents=True)
    (stale / "part-00000-crashed.parquet").write_bytes(b"garbage")
    engine.creation.create_table_like_query(f"{schema}.orders", "SELECT 1 AS id", [])
    assert engine.catalog.row_count(f"{schema}.orders") == 0
    assert not (stale / "part-00000-crashed.parquet").exists()


def test_a_schema_dropped_through_the_engine_is_created_again(engine):
    engine.catalog.create_schema("t_schema_memo")
    engine.catalog.create_schema("t_schema_memo")  # known: no second round trip
    assert engine.catalog.list_schema("t_schema_memo") == set()
    engine.catalog.drop_schema("t_schema_memo")
    assert engine.catalog.list_schema("t_schema_memo") is None
    engine.catalog.create_schema("t_schema_memo")  # forgotten with the drop: created again
    assert engine.catalog.list_schema("t_schema_memo") == set()
    engine.catalog.drop_schema("t_schema_memo")


def test_a_listed_schema_is_known_and_workers_needing_a_new_one_create_it_once(engine, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from dagster_sparkmesh.engine.catalog import SparkCatalog

    statements = []
    fresh = SparkCatalog(engine.spark)  # knows no schema yet
    original = SparkCatalog.execute
    monkeypatch.setattr(SparkCatalog, "execute", lambda self, sql: (statements.append(sql), original(self, sql))[1])
    fresh.create_schema("t_schema_listed")
    assert SparkCatalog(engine.spark).list_schema("t_schema_listed") == set()
    listed = SparkCatalog(engine.spark)
    listed.list_schema("t_schema_listed")
    listed.create_schema("t_schema_listed")  # listed a moment ago: exists, nothing to ask
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: fresh.create_schema("t_schema_raced"), range(4)))
    creations = [s for s in statements if s.startswith("CREATE SCHEMA")]
    assert creations == ["CREATE SCHEMA IF NOT EXISTS `t_schema_listed`", "CREATE SCHEMA IF NOT EXISTS `t_schema_raced`"]
    for name in ("t_schema_listed", "t_schema_raced"):
        engine.catalog.drop_schema(name)


def test_a_temp_view_of_nested_values_reads_lists_and_mappings_with_the_declared_types(engine):
    # A unit test's input for a list-of-structs column (a user's GitHub commits): Spark casts no text to an ARRAY,
    # so the test failed before its model ran.
    commits = "ARRAY<STRUCT<sha: STRING, author: STRUCT<email: STRING, name: STRING>, n: INT>>"
    rows = [("9", [{"sha": "x1", "author": {"email": None, "name": "Alice"}, "n": 2}], {"a": 1}), ("10", [], None)]
    engine.catalog.create_temp_view("nested_input", [("id", "STRING"), ("commits", commits), ("m", "MAP<STRING, INT>")], rows)
    found = engine.catalog.query_rows(
        "SELECT id, GET(commits, 0).author.name, GET(commits, 0).n + 1, SIZE(commits), m['a'] FROM nested_input ORDER BY id DESC")
    assert [tuple(row) for row in found] == [("9", "Alice", 3, 1, 1), ("10", None, None, 0, None)]
    engine.catalog.drop_temp_view("nested_input")
