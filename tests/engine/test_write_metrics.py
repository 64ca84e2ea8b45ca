"""The rows a write reports about itself (in-process sessions), instead of a second job counting the table."""

from datetime import datetime

from dagster_sparkmesh.engine.partition_sql import TimeWindow
from dagster_sparkmesh.engine.write_metrics import rows_written

# A cross join makes Spark run the write adaptively (the command sits inside the adaptive plan's result stage).
JOINED = "SELECT a.id, DATE'2024-01-01' + CAST(a.id % 3 AS INT) AS ds FROM RANGE(40) a CROSS JOIN RANGE(3) b"


def test_an_insert_reports_the_rows_it_wrote_also_when_run_adaptively(engine, schema):
    table = f"{schema}.written"
    engine.execute(f"CREATE TABLE {table} (id BIGINT, ds DATE) USING parquet PARTITIONED BY (ds)")
    assert rows_written(engine.spark.sql(f"INSERT OVERWRITE TABLE {table} {JOINED}")) == 120
    assert rows_written(engine.spark.sql(f"INSERT OVERWRITE TABLE {table} SELECT 7, DATE'2024-01-09'")) == 1
    assert engine.row_count(table) == 121  # dynamic overwrite kept the three days of the first write


def test_a_query_that_writes_nothing_reports_nothing(engine):
    assert rows_written(engine.spark.sql("SELECT 1 AS one")) is None
    assert rows_written(engine.spark.sql("SHOW DATABASES")) is None


def test_a_fresh_interval_write_returns_the_rows_inside_its_window(engine, schema):
    table = f"{schema}.fresh_count"
    engine.create_table_like_query(table, JOINED, ["ds"])
    window = TimeWindow("ds", datetime(2024, 1, 2), datetime(2024, 1, 4))  # two of the three days
    assert engine.overwrite_interval(table, JOINED, window, fresh=True) == 78  # ids 1, 4, .. and 2, 5, ..: 13 + 13, three times
    assert engine.row_count(table) == 78
