"""A failed statement is reported once, by the engine's error: PySpark's own ERROR line with the JVM's stack (one
per failed statement in PySpark 4, also for a look-up that fails on purpose) stays out of the user's terminal."""

import pytest

from dagster_sparkmesh.engine.adapter import SparkEngine
from dagster_sparkmesh.engine.counted_writes import insert_counting
from dagster_sparkmesh.errors import EngineError


def test_a_failed_statement_prints_no_pyspark_error_log(spark, capfd):
    engine = SparkEngine(spark)
    with pytest.raises(EngineError, match="TABLE_OR_VIEW_NOT_FOUND"):
        engine.catalog.execute("DESCRIBE TABLE EXTENDED no_such_schema_here.no_such_table")
    printed = capfd.readouterr()
    assert "SQLQueryContextLogger" not in printed.err + printed.out
    assert "Py4JJavaError" not in printed.err + printed.out


def test_a_failed_statement_after_an_observed_write_prints_no_listener_error(spark, schema, capfd):
    """Spark 4.1's listener of observed writes throws on each later failing statement, and Spark logged each as an
    ERROR with the JVM's stack: silenced, since the engine reports the failure itself."""
    import time

    engine = SparkEngine(spark)
    engine.catalog.execute(f"CREATE TABLE {schema}.t (x INT) USING parquet")
    assert insert_counting(spark, f"{schema}.t", "SELECT 1 AS x") == 1  # an observed write registers the listener
    capfd.readouterr()
    with pytest.raises(EngineError, match="TABLE_OR_VIEW_NOT_FOUND"):
        engine.catalog.execute("DESCRIBE TABLE EXTENDED no_such_schema_here.no_such_table")
    time.sleep(1.0)  # the listener bus reports asynchronously
    printed = capfd.readouterr()
    assert "ExecutionListenerBus" not in printed.err + printed.out
