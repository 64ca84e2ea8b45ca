"""The preflight refuses, before anything is written, plans whose models would fail on their inputs at run time.

Each test writes a tiny project (schemas named after the test's own fresh schema, so tests never share a table)
and asserts on the state store (no plan-log row, no snapshot, no interval) and on the catalog (no physical table).
"""

from __future__ import annotations

import dataclasses
import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.backfill import BackfillFailed
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.preflight import (
    BadTimeColumn,
    MissingExternalTable,
    UnanalyzableQuery,
    run_preflight,
    time_column_problem,
)
from dagster_sparkmesh.model.kinds import IncrementalByTimeRangeKind
from dagster_sparkmesh.snapshot.naming import physical_schema, physical_table

START, END = datetime(2024, 1, 1), datetime(2024, 1, 4)
CONFIG = "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  cron: '@daily'\n"


def _kind(column: str = "ds", time_format: str = "yyyy-MM-dd") -> IncrementalByTimeRangeKind:
    return IncrementalByTimeRangeKind(time_column=column, time_column_format=time_format)


@pytest.mark.parametrize(
    ("columns", "time_format", "accepted"),
    [
        ({"ds": "date", "x": "int"}, "yyyy-MM-dd", True),
        ({"DS": "timestamp"}, "yyyy-MM-dd", True),
        ({"ds": "timestamp_ntz"}, "yyyy-MM-dd", True),
        ({"ds": "string"}, "yyyy-MM-dd", True),
        ({"ds": "int"}, "yyyyMMdd", True),
        ({"ds": "bigint"}, "yyyyMMddHH", True),
        ({"ds": "int"}, "yyyy-MM-dd", False),
        ({"ds": "double"}, "yyyy-MM-dd", False),
        ({"ds": "boolean"}, "yyyy-MM-dd", False),
        ({"ds": "decimal(10,0)"}, "yyyyMMdd", False),
        ({"ds": "array<date>"}, "yyyy-MM-dd", False),
        ({"day": "date"}, "yyyy-MM-dd", False),
    ],
)
def test_time_column_types_accepted_match_what_the_interval_writer_compares(columns, time_format, accepted):
    problem = time_column_problem(_kind(time_format=time_format), columns)
    assert (problem is None) == accepted, problem
    if problem is not None:
        what, hint = problem
        assert "ds" in what and "ds" in hint


def _write(project: Path, files: dict[str, str]) -> Path:
    (project / "models").mkdir(parents=True)
    (project / "config.yaml").write_text(CONFIG)
    for relative, text in files.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return project


def _nothing_written(ctx, spark, schemas: list[str]) -> None:
    assert ctx.state.list_plan_applications() == []
    assert ctx.state.all_snapshots() == []
    databases = {row[0] for row in spark.sql("SHOW DATABASES").collect()}
    for name in schemas:
        assert physical_schema(f"{name}.x") not in databases


def test_missing_external_table_is_refused_before_the_plan_log_row(
    tmp_path, spark, schema, make_context, clean_catalog
):
    project = _write(tmp_path / "p", {
        "external_models.yaml": f"- name: {schema}.events\n  columns:\n    ds: date\n",
        "models/stage.sql": f"MODEL (name {schema}_stg.events, kind VIEW);\n\nSELECT ds FROM {schema}.events\n",
        "models/daily.sql": f"""
            MODEL (name {schema}_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));

            SELECT ds, COUNT(*) AS n FROM {schema}_stg.events WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds
            """,
    })  # fmt: skip
    ctx = make_context(project)

    with pytest.raises(MissingExternalTable) as refused:
        apply_plan(ctx, plan_for(ctx, START, END))

    message = str(refused.value)
    assert f"external model {schema}.events has no table" in message
    assert f"schema {schema} has no table events" in message
    assert f"{schema}_stg.events (models/stage.sql)" in message
    assert refused.value.path == project / "external_models.yaml"
    _nothing_written(ctx, spark, [f"{schema}_stg", f"{schema}_shop"])


def test_new_sql_parents_are_analyzed_so_a_bad_time_column_is_refused_up_front(
    tmp_path, spark, schema, make_context, clean_catalog
):
    project = _write(tmp_path / "p", {
        "models/events.sql": f"MODEL (name {schema}_raw.events, kind FULL);\n\nSELECT 1.5D AS ds, 1 AS id\n",
        "models/stage.sql": f"MODEL (name {schema}_stg.events, kind VIEW);\n\nSELECT ds, id FROM {schema}_raw.events\n",
        "models/daily.sql": f"""
            MODEL (name {schema}_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));

            SELECT ds, COUNT(*) AS n FROM {schema}_stg.events GROUP BY ds
            """,
        "models/missing.sql": f"""
            MODEL (name {schema}_shop.missing, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));

            SELECT id FROM {schema}_raw.events
            """,
    })  # fmt: skip
    ctx = make_context(project)

    with pytest.raises(BadTimeColumn) as refused:
        apply_plan(ctx, plan_for(ctx, START, END))

    message = str(refused.value)
    assert f"model {schema}_shop.daily: its time column ds is a double" in message
    assert f"model {schema}_shop.missing: its query returns no column ds" in message, "every problem is listed"
    assert refused.value.path in {project / "models" / "daily.sql", project / "models" / "missing.sql"}
    _nothing_written(ctx, spark, [f"{schema}_raw", f"{schema}_stg", f"{schema}_shop"])
    leftovers = [t.name for t in spark.catalog.listTables() if t.name.startswith("sparkmesh_preflight_")]
    assert leftovers == [], "the preflight's temp views are dropped"


def test_a_query_spark_cannot_analyze_is_refused_with_its_model_and_file(
    tmp_path, spark, schema, make_context, clean_catalog
):
    project = _write(tmp_path / "p", {
        "models/events.sql": f"MODEL (name {schema}_raw.events, kind FULL);\n\nSELECT DATE'2024-01-01' AS ds\n",
        "models/daily.sql": f"""
            MODEL (name {schema}_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));

            SELECT ds, no_such_column FROM {schema}_raw.events
            """,
    })  # fmt: skip
    ctx = make_context(project)

    with pytest.raises(UnanalyzableQuery) as refused:
        apply_plan(ctx, plan_for(ctx, START, END))

    assert f"model {schema}_shop.daily: Spark cannot analyze its query" in str(refused.value)
    assert "no_such_column" in str(refused.value)
    assert refused.value.path == project / "models" / "daily.sql"
    _nothing_written(ctx, spark, [f"{schema}_raw", f"{schema}_shop"])


PYTHON_PARENT = """
    from dagster_sparkmesh import model


    @model("{schema}_raw.events", kind="FULL")
    def execute(context, start, end, execution_time, **kwargs):
        return context.spark.sql("SELECT 1.5D AS ds, 1 AS id")
    """


def test_a_model_reading_a_new_python_model_is_checked_before_its_own_first_write(
    tmp_path, spark, schema, make_context, clean_catalog
):
    project = _write(tmp_path / "p", {
        "models/events.py": PYTHON_PARENT.format(schema=schema),
        "models/daily.sql": f"""
            MODEL (name {schema}_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));

            SELECT ds, COUNT(*) AS n FROM {schema}_raw.events GROUP BY ds
            """,
    })  # fmt: skip
    ctx = make_context(project)
    plan = plan_for(ctx, START, END)
    assert run_preflight(ctx, plan, plan.missing_intervals).time_columns_checked == frozenset(), "known only at run time"

    with pytest.raises(BackfillFailed) as failed:
        apply_plan(ctx, plan)

    error = failed.value.errors[f"{schema}_shop.daily"]
    assert isinstance(error, BadTimeColumn)
    assert "its time column ds is a double" in str(error) and error.path == project / "models" / "daily.sql"
    daily = plan.version_of(f"{schema}_shop.daily")
    assert not ctx.engine.catalog.physical_exists(physical_table(f"{schema}_shop.daily", daily)), "nothing of the model written"
    assert ctx.state.get_intervals(f"{schema}_shop.daily", daily) == []
    assert ctx.engine.catalog.physical_exists(physical_table(f"{schema}_raw.events", plan.version_of(f"{schema}_raw.events")))


def test_a_valid_plan_passes_and_reports_what_it_checked(tmp_path, spark, schema, make_context, clean_catalog):
    spark.sql(f"CREATE TABLE {schema}.events (ts TIMESTAMP, id INT) USING parquet")
    project = _write(tmp_path / "p", {
        "external_models.yaml": f"- name: {schema}.events\n  columns:\n    ts: timestamp\n    id: int\n",
        "models/stage.sql": f"""
            MODEL (name {schema}_stg.events, kind VIEW);

            SELECT CAST(ts AS DATE) AS ds, id FROM {schema}.events
            """,
        "models/daily.sql": f"""
            MODEL (name {schema}_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column (ds, '%Y%m%d')));

            SELECT CAST(date_format(ds, 'yyyyMMdd') AS INT) AS ds, COUNT(*) AS n
            FROM {schema}_stg.events WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds
            """,
    })  # fmt: skip
    ctx = make_context(project)
    plan = plan_for(ctx, START, END)

    report = run_preflight(ctx, plan, plan.missing_intervals)

    assert report.externals_checked == {f"{schema}.events"}
    assert report.time_columns_checked == {f"{schema}_shop.daily"}
    assert ctx.state.list_plan_applications() == []
    result = apply_plan(ctx, plan)
    assert {m.model for m in result.models if not m.skipped} == {f"{schema}_stg.events", f"{schema}_shop.daily"}


def test_an_external_table_a_pre_statement_creates_is_not_refused(tmp_path, spark, schema, make_context, clean_catalog):
    """SQLMesh's sushi example: customers.sql creates raw.demographics in its pre-statements, then reads it."""
    project = _write(tmp_path / "p", {
        "external_models.yaml": f"- name: {schema}_raw.demographics\n  columns:\n    id: int\n    zip: string\n",
        "models/customers.sql": f"""
            MODEL (name {schema}_shop.customers, kind FULL);

            CREATE SCHEMA IF NOT EXISTS {schema}_raw;
            CREATE TABLE IF NOT EXISTS {schema}_raw.demographics AS (SELECT 1 AS id, '00000' AS zip);

            SELECT id, zip FROM {schema}_raw.demographics
            """,
    })  # fmt: skip
    ctx = make_context(project)

    apply_plan(ctx, plan_for(ctx, START, END))

    assert spark.sql(f"SELECT id, zip FROM {schema}_shop.customers").collect() == [(1, "00000")]


def test_the_first_batch_the_preflight_rendered_from_existing_tables_is_not_rendered_again(
    tmp_path, spark, schema, make_context, clean_catalog, monkeypatch
):
    from dagster_sparkmesh.execution.writes import queries

    project = _write(tmp_path / "p", {
        "models/events.sql": f"MODEL (name {schema}_raw.events, kind FULL);\n\nSELECT DATE'2024-01-02' AS ds, 1 AS id\n",
    })  # fmt: skip
    ctx = make_context(project)
    apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 2)))  # events' table exists from now on
    (project / "models" / "daily.sql").write_text(textwrap.dedent(f"""
        MODEL (name {schema}_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 3));

        SELECT ds, COUNT(*) AS n FROM {schema}_raw.events WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds
        """))
    ctx = make_context(project)
    plan = plan_for(ctx, START, END)
    report = run_preflight(ctx, plan, {f"{schema}_shop.daily": plan.missing_intervals[f"{schema}_shop.daily"]})
    first = report.first_queries[f"{schema}_shop.daily"]
    first_batch, first_query = first.interval, first.sql
    # Analyzed once: the table is created from these.
    assert report.output_columns[f"{schema}_shop.daily"] == (("ds", "date"), ("n", "bigint"))
    assert (first_batch.start, first_batch.end) == (START, END)  # days 1-3: one batch of 3
    assert physical_table(f"{schema}_raw.events", plan.version_of(f"{schema}_raw.events")).split(".")[1] in first_query
    rendered, render = [], queries.render_query
    monkeypatch.setattr(queries, "render_query", lambda model, **k: rendered.append(model.name) or render(model, **k))
    apply_plan(ctx, plan)
    assert f"{schema}_shop.daily" not in rendered  # its only batch ran the preflight's text
    rows = spark.sql(f"SELECT ds, n FROM {schema}_shop.daily").collect()
    assert [(str(r.ds), r.n) for r in rows] == [("2024-01-02", 1)]


def test_a_model_whose_parent_is_new_creates_its_table_with_its_first_write_without_a_second_analysis(
    tmp_path, spark, schema, make_context, clean_catalog, monkeypatch
):
    """The preflight analyzed the child over a temp view of its new parent; that analysis names the period table's
    columns, and the first write (one CTAS) gives the table the types the query has over the parent's table."""
    from dagster_sparkmesh.engine.catalog import SparkCatalog

    project = _write(tmp_path / "p", {
        "models/events.sql": f"""
            MODEL (name {schema}_raw.events, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));

            SELECT ds, 1 AS id FROM VALUES (DATE'2024-01-01'), (DATE'2024-01-02') AS t(ds)
            WHERE ds BETWEEN @start_ds AND @end_ds
            """,
        "models/daily.sql": f"""
            MODEL (name {schema}_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));

            SELECT ds, COUNT(*) AS n FROM {schema}_raw.events WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds
            """,
    })  # fmt: skip
    ctx = make_context(project)
    plan = plan_for(ctx, START, datetime(2024, 1, 3))
    analyzed, analyze = [], SparkCatalog.query_schema
    monkeypatch.setattr(SparkCatalog, "query_schema", lambda self, sql: analyzed.append(sql) or analyze(self, sql))
    apply_plan(ctx, plan)
    # Each query analyzed once, by the preflight (the child's over a temp view of its parent's query).
    assert [("GROUP BY" in sql, "VALUES" in sql) for sql in analyzed] == [(False, True), (True, False)]
    daily = physical_table(f"{schema}_shop.daily", plan.version_of(f"{schema}_shop.daily"))
    assert spark.sql(f"DESCRIBE {daily}").collect()[:2] == spark.sql(f"DESCRIBE {daily}__data").collect()[:2]
    assert [tuple(r) for r in spark.sql(f"DESCRIBE {daily}").select("col_name", "data_type").collect()] == [
        ("ds", "date"), ("n", "bigint")
    ]
    rows = spark.sql(f"SELECT ds, n FROM {schema}_shop.daily ORDER BY ds").collect()
    assert [(str(r.ds), r.n) for r in rows] == [("2024-01-01", 1), ("2024-01-02", 1)]


def _two_new_models(tmp_path, schema):
    return _write(tmp_path / "p", {
        "models/events.sql": f"""
            MODEL (name {schema}_raw.events, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));

            SELECT ds, 1 AS id FROM VALUES (DATE'2024-01-01'), (DATE'2024-01-02') AS t(ds)
            WHERE ds BETWEEN @start_ds AND @end_ds
            """,
        "models/totals.sql": f"""
            MODEL (name {schema}_shop.totals, kind FULL);

            SELECT COUNT(*) AS n FROM {schema}_raw.events
            """,
    })  # fmt: skip


def test_tables_the_preflight_did_not_list_are_written_without_an_existence_look_up(
    tmp_path, spark, schema, make_context, clean_catalog, monkeypatch
):
    from dagster_sparkmesh.engine.catalog import SparkCatalog

    ctx = make_context(_two_new_models(tmp_path, schema))
    plan = plan_for(ctx, START, datetime(2024, 1, 3))
    looked_up, object_type = [], SparkCatalog.object_type
    monkeypatch.setattr(SparkCatalog, "object_type", lambda self, name: looked_up.append(name) or object_type(self, name))
    apply_plan(ctx, plan)
    tables = {physical_table(name, plan.version_of(name)) for name in (f"{schema}_raw.events", f"{schema}_shop.totals")}
    assert not tables & set(looked_up)
    assert spark.sql(f"SELECT n FROM {schema}_shop.totals").collect()[0][0] == 2


def test_a_table_created_after_the_preflight_listed_it_absent_is_written_into(
    tmp_path, spark, schema, make_context, clean_catalog, monkeypatch
):
    """Another writer may create a table between the listing and the first write: the creation finds it there
    and the write goes into it (the same rows, the view over them)."""
    from dagster_sparkmesh.execution import backfill
    from dagster_sparkmesh.execution import preflight as preflight_module

    ctx = make_context(_two_new_models(tmp_path, schema))
    plan = plan_for(ctx, START, datetime(2024, 1, 3))
    apply_plan(ctx, plan)  # the tables exist from now on
    physical = [physical_table(n, plan.version_of(n)) for n in (f"{schema}_raw.events", f"{schema}_shop.totals")]
    before = [ctx.engine.catalog.view_text(table) for table in physical]
    for name in (f"{schema}_raw.events", f"{schema}_shop.totals"):
        for interval in ctx.state.get_intervals(name, plan.version_of(name)):
            ctx.state.remove_intervals(name, plan.version_of(name), interval)
    stale = preflight_module.run_preflight

    def listed_before_they_existed(*args, **kwargs):
        report = stale(*args, **kwargs)
        return dataclasses.replace(report, absent_tables=frozenset({f"{schema}_raw.events", f"{schema}_shop.totals"}))

    monkeypatch.setattr(backfill, "run_preflight", listed_before_they_existed)
    apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 3)))
    after = [ctx.engine.catalog.view_text(table) for table in physical]
    assert all(old != new for old, new in zip(before, after))  # both rewritten: new segments, a new generation
    rows = spark.sql(f"SELECT ds, id FROM {schema}_raw.events ORDER BY ds").collect()
    assert [(str(r.ds), r.id) for r in rows] == [("2024-01-01", 1), ("2024-01-02", 1)]
    assert spark.sql(f"SELECT n FROM {schema}_shop.totals").collect()[0][0] == 2


def test_tables_created_by_pre_statements_are_named_as_externals_are_with_their_catalog():
    from dagster_sparkmesh.execution.preflight_inputs import created_by_pre_statements
    from tests.plan.conftest import make_model

    model = make_model("s.reader", "SELECT 1 AS a", pre_statements=(
        "CREATE TABLE IF NOT EXISTS lake.raw.events AS SELECT 1 AS id",
        "CREATE TABLE spark_catalog.raw.orders (id INT)",
        "CREATE TABLE raw.customers AS SELECT 1 AS id",
        "INSERT INTO raw.other SELECT 1",
    ))
    assert created_by_pre_statements([model]) == {"lake.raw.events", "raw.orders", "raw.customers"}


def _daily_project(tmp_path, schema, time_column_sql: str = "ds") -> Path:
    return _write(tmp_path / "p", {
        "models/events.sql": f"""
            MODEL (name {schema}_raw.events, kind FULL);

            SELECT ds, 1 AS id FROM VALUES (DATE'2024-01-01'), (DATE'2024-01-02'), (DATE'2024-01-03') AS t(ds)
            """,
        "models/daily.sql": _daily_sql(schema, time_column_sql),
    })  # fmt: skip


def _daily_sql(schema: str, time_column_sql: str) -> str:
    return textwrap.dedent(f"""
        MODEL (name {schema}_shop.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));

        SELECT {time_column_sql} AS ds, COUNT(*) AS n FROM {schema}_raw.events
        WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY 1
        """)


def test_a_query_that_wrote_its_table_before_is_not_analyzed_again(
    tmp_path, spark, schema, make_context, clean_catalog, monkeypatch
):
    """A daily run's models: their version is their fingerprint's own and wrote intervals, so their time column
    was checked before their first write; the preflight asks Spark nothing about them."""
    from dagster_sparkmesh.engine.catalog import SparkCatalog

    project = _daily_project(tmp_path, schema)
    ctx = make_context(project)
    apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 3)))  # days 1 and 2
    analyzed, analyze = [], SparkCatalog.query_schema
    monkeypatch.setattr(SparkCatalog, "query_schema", lambda self, sql: analyzed.append(sql) or analyze(self, sql))
    plan = plan_for(ctx, START, END)

    report = run_preflight(ctx, plan, plan.missing_intervals)

    assert analyzed == [] and report.time_columns_checked == {f"{schema}_shop.daily"}
    assert f"{schema}_shop.daily" not in report.output_columns
    apply_plan(ctx, plan)
    rows = spark.sql(f"SELECT ds, n FROM {schema}_shop.daily ORDER BY ds").collect()
    assert [(str(r.ds), r.n) for r in rows] == [("2024-01-01", 1), ("2024-01-02", 1), ("2024-01-03", 1)]


def test_a_forward_only_change_sharing_a_written_table_is_analyzed_and_its_bad_time_column_refused(
    tmp_path, spark, schema, make_context, clean_catalog
):
    """Its version is the table's, which another query wrote: the new query's time column is checked up front."""
    project = _daily_project(tmp_path, schema)
    ctx = make_context(project)
    apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 3)))
    (project / "models" / "daily.sql").write_text(_daily_sql(schema, "CAST(dayofmonth(ds) AS DOUBLE)"))
    ctx = make_context(project)
    plan = plan_for(ctx, START, END, forward_only=True)
    daily = f"{schema}_shop.daily"
    assert plan.missing_intervals[daily] and ctx.state.get_intervals(daily, plan.version_of(daily))

    with pytest.raises(BadTimeColumn, match=f"model {daily}: its time column ds is a double"):
        apply_plan(ctx, plan)

    assert [(str(r.ds), r.n) for r in spark.sql(f"SELECT ds, n FROM {daily} ORDER BY ds").collect()] == [
        ("2024-01-01", 1), ("2024-01-02", 1)
    ]


def test_a_model_changed_back_to_a_version_that_wrote_before_is_analyzed_again(
    tmp_path, spark, schema, make_context, clean_catalog, monkeypatch
):
    """Reverted to a query whose version holds intervals: changed against the environment, so it is checked."""
    from dagster_sparkmesh.engine.catalog import SparkCatalog

    project = _daily_project(tmp_path, schema)
    ctx = make_context(project)
    apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 3)))
    first = (project / "models" / "daily.sql").read_text()
    (project / "models" / "daily.sql").write_text(first.replace("COUNT(*) AS n", "COUNT(*) + 1 AS n"))
    ctx = make_context(project)
    apply_plan(ctx, plan_for(ctx, START, datetime(2024, 1, 3)))  # a breaking change: a table of its own
    (project / "models" / "daily.sql").write_text(first)
    ctx = make_context(project)
    plan = plan_for(ctx, START, END)
    daily = f"{schema}_shop.daily"
    assert daily in plan.directly_modified and ctx.state.get_intervals(daily, plan.version_of(daily))
    analyzed, analyze = [], SparkCatalog.query_schema
    monkeypatch.setattr(SparkCatalog, "query_schema", lambda self, sql: analyzed.append(sql) or analyze(self, sql))

    report = run_preflight(ctx, plan, plan.missing_intervals)

    assert len(analyzed) == 1 and "COUNT(*) AS n" in analyzed[0]
    assert report.output_columns[daily] == (("ds", "date"), ("n", "bigint"))
