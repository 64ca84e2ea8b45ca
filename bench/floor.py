"""The floor: a project's SQL run straight on Spark, without orchestration, state, audits or views.

Each model's query is rendered once for the whole range (``project.rendering.render_query``) and written with
one statement, in DAG order, into tables of ``floor__<schema>`` schemas: what the same work costs when nobody
plans, checks or records anything. The orchestrated runs are compared with it. Models whose parents are written
run ``workers`` at a time, as the product runs them (``SparkConnection.workers``: 2 in-process, 4 on a server):
a floor of one writer against the product's two or four would flatter neither.
"""

from __future__ import annotations

import time
from datetime import datetime

from dagster_sparkmesh.execution.scheduler import run_dag
from dagster_sparkmesh.model.table_formats import lakehouse_format
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.project.rendering import render_query

FLOOR_PREFIX = "floor__"
LAYOUTS = ("plain", "monthly", "partitioned", "views", "monthly_views")
MONTH_LAYOUTS = ("monthly", "monthly_views")
VIEW_LAYOUTS = ("views", "monthly_views")


def floor_table(model_name: str, layout: str) -> str:
    schema, table = model_name.split(".")
    return f"{FLOOR_PREFIX}{layout}__{schema}.{table}"


def run_floor(
    spark, project: Project, start: datetime, end: datetime, *, layout: str, workers: int = 2
) -> dict[str, float]:
    """Write every model of ``project`` over ``[start, end)``; returns seconds per model. A model with a lakehouse
    format (``table_format``) is written as a table of that format whatever the layout.

    ``layout``: ``plain`` = unpartitioned CTAS; ``monthly`` = the layout sparkmesh writes (time-range models
    partitioned by their time column's month, one segment per month as ``engine.period_tables`` writes a backfill);
    ``partitioned`` = the day-partitioned layout (``SPARKMESH_PERIOD_TABLES=0``; one
    partition per day); ``views`` = plain tables plus the views sparkmesh keeps: a physical view over each table,
    which the children read, and at the end an environment view over each model's physical relation (a VIEW model
    is its own physical relation, as in sparkmesh); ``monthly_views`` = both sparkmesh layouts at once, month
    partitions and the views. The environment views are in the caller's total, not in any model's seconds.
    """
    seconds = {}
    lookup = {name: floor_table(name, layout) for name in project.models}
    read = dict(lookup)
    if layout in VIEW_LAYOUTS:
        read.update({name: f"{lookup[name]}__view" for name, model in project.models.items() if model.kind_name != "VIEW"})
    for schema in {table.split(".")[0] for table in lookup.values()}:
        spark.sql(f"CREATE SCHEMA IF NOT EXISTS `{schema}`")

    def write(name: str) -> None:
        model = project.models[name]
        began = time.perf_counter()
        query = render_query(model, start=start, end=end, execution_time=end, table_for=read, models=project.models)
        spark.sql(_statement(model, lookup[name], query, layout))
        if read[name] != lookup[name]:
            spark.sql(f"CREATE VIEW {read[name]} AS SELECT * FROM {lookup[name]}")
        seconds[name] = time.perf_counter() - began

    parents = {name: model.depends_on & project.models.keys() for name, model in project.models.items()}
    run_dag(parents, write, max_workers=workers)
    if layout in VIEW_LAYOUTS:
        _environment_views(spark, read, layout)
    return seconds


def run_daily_floor(
    spark, project: Project, start: datetime, day_start: datetime, day_end: datetime, *, workers: int = 2
) -> dict[str, float]:
    """The daily run's work as plain statements over the ``plain`` floor's tables (``run_floor`` wrote them over
    ``[start, day_start)``): a time-range model's query for the new day appended (``INSERT INTO``), a FULL model's
    query over ``[start, day_end)`` overwriting its table, a VIEW nothing. In DAG order, ``workers`` at a time, as
    the product writes; returns seconds per model written."""
    seconds = {}
    lookup = {name: floor_table(name, "plain") for name in project.models}

    def write(name: str) -> None:
        model = project.models[name]
        if model.kind_name == "VIEW":
            return
        began = time.perf_counter()
        incremental = model.kind_name == "INCREMENTAL_BY_TIME_RANGE"
        query = render_query(
            model, start=day_start if incremental else start, end=day_end, execution_time=day_end,
            table_for=lookup, models=project.models,
        )
        verb = "INSERT INTO" if incremental else "INSERT OVERWRITE TABLE"
        spark.sql(f"{verb} {lookup[name]} SELECT * FROM ({query}) AS source")
        seconds[name] = time.perf_counter() - began

    parents = {name: model.depends_on & project.models.keys() for name, model in project.models.items()}
    run_dag(parents, write, max_workers=workers)
    return seconds


def _environment_views(spark, read: dict[str, str], layout: str) -> None:
    """An environment view per model over what its children read, as a promotion creates them."""
    views = {name: f"{FLOOR_PREFIX}{layout}_env__{name}" for name in read}
    for schema in {view.split(".")[0] for view in views.values()}:
        spark.sql(f"CREATE SCHEMA IF NOT EXISTS `{schema}`")
    for name, view in views.items():
        spark.sql(f"CREATE VIEW {view} AS SELECT * FROM {read[name]}")


def _statement(model, table: str, query: str, layout: str) -> str:
    if model.kind_name == "VIEW":
        return f"CREATE VIEW {table} AS {query}"
    table_format = lakehouse_format(model)
    if table_format is not None:  # a table of that format, partitioned as the product partitions it
        incremental = model.kind_name == "INCREMENTAL_BY_TIME_RANGE"
        partitioned = f" PARTITIONED BY ({model.kind.time_column})" if incremental else ""
        return f"CREATE TABLE {table} USING {table_format}{partitioned} AS {query}"
    partitioned = ""
    if layout == "partitioned" and model.kind_name == "INCREMENTAL_BY_TIME_RANGE":
        partitioned = f" PARTITIONED BY ({model.kind.time_column})"
    if layout in MONTH_LAYOUTS and model.kind_name == "INCREMENTAL_BY_TIME_RANGE":
        column = model.kind.time_column
        query = f"SELECT *, TRUNC({column}, 'MM') AS __month FROM ({query}) AS source"
        partitioned = " PARTITIONED BY (__month)"
    return f"CREATE TABLE {table} USING parquet{partitioned} AS {query}"


def direct_overwrite(spark, table: str, query: str, time_column: str) -> float:
    """One ``INSERT OVERWRITE`` of ``query`` into a table partitioned by ``time_column`` (created first, empty)."""
    spark.sql(f"CREATE TABLE {table} USING parquet PARTITIONED BY ({time_column}) AS SELECT * FROM ({query}) WHERE 1 = 0")
    columns = ", ".join(f"`{field.name}`" for field in spark.table(table).schema.fields)
    began = time.perf_counter()
    spark.sql(f"INSERT OVERWRITE TABLE {table} SELECT {columns} FROM ({query}) AS source")
    return time.perf_counter() - began
