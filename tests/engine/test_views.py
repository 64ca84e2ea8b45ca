import threading

from dagster_sparkmesh.errors import EngineError


def test_create_then_alter_view_points_at_the_new_table(engine, schema):
    engine.creation.create_table_like_query(f"{schema}.v1", "SELECT 1 AS id", [])
    engine.replace_full(f"{schema}.v1", "SELECT 1 AS id")
    engine.creation.create_table_like_query(f"{schema}.v2", "SELECT 2 AS id, 'x' AS extra", [])
    engine.replace_full(f"{schema}.v2", "SELECT 2 AS id, 'x' AS extra")
    view = f"{schema}.model"
    engine.catalog.create_or_alter_view(view, f"SELECT * FROM `{schema}`.`v1`")
    assert engine.catalog.view_exists(view) and not engine.catalog.table_exists(view)
    assert engine.catalog.query_rows(f"SELECT * FROM {view}") == [(1,)]
    engine.catalog.create_or_alter_view(view, f"SELECT * FROM `{schema}`.`v2`")
    assert engine.catalog.query_rows(f"SELECT * FROM {view}") == [(2, "x")]
    engine.catalog.drop_view(view)
    assert not engine.catalog.view_exists(view)


def test_altering_a_view_never_makes_it_missing_for_readers(engine, schema):
    for version in (1, 2):
        engine.creation.create_table_like_query(f"{schema}.t{version}", f"SELECT {version} AS id", [])
        engine.replace_full(f"{schema}.t{version}", f"SELECT {version} AS id")
    view = f"{schema}.model"
    engine.catalog.create_or_alter_view(view, f"SELECT * FROM `{schema}`.`t1`")
    stop, failures, reads = threading.Event(), [], []

    def reader():
        while not stop.is_set():
            try:
                reads.append(engine.catalog.query_rows(f"SELECT * FROM {view}")[0][0])
            except EngineError as error:
                failures.append(error)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for round_ in range(10):
            engine.catalog.create_or_alter_view(view, f"SELECT * FROM `{schema}`.`t{1 + round_ % 2}`")
    finally:
        stop.set()
        thread.join()
    assert failures == []
    assert len(reads) > 0 and set(reads) <= {1, 2}
