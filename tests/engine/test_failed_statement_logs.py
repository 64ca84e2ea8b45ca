"""A failed statement is reported once, by the engine's error: PySpark's own ERROR line with the JVM's stack (one
per failed statement in PySpark 4, also for a look-up that fails on purpose) stays out of the user's terminal."""

import pytest

from dagster_sparkmesh.engine.adapter import SparkEngine
from dagster_sparkmesh.errors import EngineError


def test_a_failed_statement_prints_no_pyspark_error_log(spark, capfd):
    engine = SparkEngine(spark)
    with pytest.raises(EngineError, match="TABLE_OR_VIEW_NOT_FOUND"):
        engine.catalog.execute("DESCRIBE TABLE EXTENDED no_such_schema_here.no_such_table")
    printed = capfd.readouterr()
    assert "SQLQueryContextLogger" not in printed.err + printed.out
    assert "Py4JJavaError" not in printed.err + printed.out
