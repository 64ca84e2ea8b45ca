"""The benchmark scripts' parts that decide what is measured: the floor's statements and its concurrency, the one-model
change, the one-model project, the daily run's new day."""

from __future__ import annotations

import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import render_query

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def bench_modules():
    sys.path.insert(0, str(BENCH))  # the scripts import their siblings by name, as when run by hand
    try:
        import core_bench
        import dagster_bench
        import floor
        import generate_project

        yield core_bench, dagster_bench, floor, generate_project
    finally:
        sys.path.remove(str(BENCH))


def test_floor_statements_read_floor_tables_and_partition_like_sparkmesh(tmp_path, bench_modules):
    core_bench, _, floor, generate_project = bench_modules
    generate_project.generate_project(tmp_path, models=12, days=3)
    project = load_project(tmp_path, use_cache=False)
    lookup = {name: floor.floor_table(name, "partitioned") for name in project.models}
    for name, model in project.models.items():
        query = render_query(model, start=datetime(2024, 1, 1), end=datetime(2024, 1, 4),
                             execution_time=datetime(2024, 1, 4), table_for=lookup, models=project.models)
        statement = floor._statement(model, lookup[name], query, "partitioned")
        assert statement.startswith("CREATE VIEW" if model.kind_name == "VIEW" else "CREATE TABLE")
        assert ("PARTITIONED BY (ds)" in statement) == (model.kind_name == "INCREMENTAL_BY_TIME_RANGE")
        assert "sparkmesh__" not in statement and "floor__partitioned__" in statement
        both = floor._statement(model, lookup[name], query, "monthly_views")
        assert ("PARTITIONED BY (__month)" in both) == (model.kind_name == "INCREMENTAL_BY_TIME_RANGE")


def test_the_one_model_change_is_a_breaking_change_of_a_model_with_descendants(tmp_path, bench_modules):
    core_bench, _, _, generate_project = bench_modules
    generate_project.generate_project(tmp_path, models=30, days=3)
    before = load_project(tmp_path, use_cache=False)
    changed = core_bench._mid_layer_model(tmp_path)
    core_bench._edit(tmp_path, changed, "+ 1 AS amount")
    after = load_project(tmp_path, use_cache=False)
    assert before.descendants(changed)
    differs = {n for n in before.models if before.models[n].fingerprint != after.models[n].fingerprint}
    assert differs == {changed} | before.descendants(changed)


def test_the_one_model_project_loads_as_one_daily_incremental_model(tmp_path, bench_modules):
    _, dagster_bench, _, _ = bench_modules
    project = load_project(dagster_bench.one_model_project(tmp_path, rows_per_day=10), use_cache=False)
    model = project.models["bench.events"]
    assert list(project.models) == ["bench.events"] and model.kind_name == "INCREMENTAL_BY_TIME_RANGE"
    sql = render_query(model, start=datetime(2024, 1, 1), end=datetime(2024, 1, 3),
                       execution_time=datetime(2024, 1, 3), table_for={}, models=project.models)
    assert "SEQUENCE(1, 10)" in sql and "2024-01-02" in sql


def test_the_backfill_is_judged_against_the_plain_floor_and_never_above_the_day_partitioned_one(bench_modules):
    core_bench, _, _, _ = bench_modules
    floors = {"plain": 10.0, "monthly": 14.0, "partitioned": 25.0, "views": 14.0, "monthly_views": 18.0}
    figures = {"seconds": 20.0, "written": [], "plan_seconds": 0.0, "apply_seconds": 20.0, "slowest": []}
    judged = [row for row in core_bench._backfill_rows(floors, figures) if row.what.startswith("b.")]
    assert [(row.target, row.verdict) for row in judged] == [
        ("<= 1.5x plain floor", "MISSED"), ("never above the day-partitioned floor", "ok"),
    ]
    assert judged[0].measured == "20.00 s = 2.00x plain, 1.43x monthly, 1.43x views, 1.11x both"
    assert judged[1].measured == "0.80x the day-partitioned floor"


def test_the_benches_read_the_run_summary_line(tmp_path, bench_modules):
    from dagster_sparkmesh.cli.plan_view import run_summary
    from dagster_sparkmesh.execution.results import ModelRunResult
    from dagster_sparkmesh.snapshot.records import Interval

    core_bench, _, _, generate_project = bench_modules
    generate_project.generate_project(tmp_path, models=12, days=3)
    project = load_project(tmp_path, use_cache=False)
    day = Interval(start=datetime(2024, 1, 4), end=datetime(2024, 1, 5))
    computed = [ModelRunResult(model=name, version="v", physical_table=None, intervals=(day,), rows_written=2)
                for name in project.models]
    ran = core_bench.RAN_LINE.search(f"  some model line\n{run_summary(computed, project.models, 1.0)}\n")
    assert ran is not None and ran.group(1) == "12" and ran.group(3) == "24"
    assert "incremental model(s)" in ran.group(2)


def test_the_side_by_side_gives_sqlmesh_local_spark_and_keeps_the_project_settings(tmp_path, bench_modules):
    sys.path.insert(0, str(BENCH))
    try:
        import sqlmesh_side_by_side
    finally:
        sys.path.remove(str(BENCH))
    _, _, _, generate_project = bench_modules
    generate_project.generate_project(tmp_path, models=4, days=3)
    sqlmesh_side_by_side._use_local_spark(tmp_path)
    config = (tmp_path / "config.yaml").read_text()
    local = yaml.safe_load(config)["gateways"]["local"]
    assert local["connection"]["config"]["spark.master"] == "local[2]" and local["state_connection"]["type"] == "duckdb"
    assert config.count("gateways:") == 1 and "default_gateway: local" in config and "start: '2024-01-01'" in config
    rounds = [{"floor": 10.0, "sparkmesh local": 14.0, "sparkmesh managed": 16.0, "sqlmesh": 30.0,
               "floor daily": 4.0, "sparkmesh local daily": 5.0, "sparkmesh managed daily": 6.0, "sqlmesh daily": 11.0,
               "rows equal local": 4, "rows equal managed": 3, "models": 4}]
    verdicts = {row.what: row.verdict for row in sqlmesh_side_by_side._rows(rounds)}
    assert verdicts["initial backfill, sparkmesh local / sqlmesh"] == "ok"
    assert verdicts["initial backfill, sparkmesh managed / sqlmesh"] == "MISSED"
    assert verdicts["daily run, sparkmesh local / floor"] == "ok" and verdicts["daily run, sparkmesh managed / floor"] == "MISSED"
    assert verdicts["daily run, sparkmesh local / sqlmesh"] == "ok" and verdicts["daily run, sparkmesh managed / sqlmesh"] == "MISSED"
    assert verdicts["rows after the daily run, sparkmesh local = sqlmesh"] == "ok"
    assert verdicts["rows after the daily run, sparkmesh managed = sqlmesh"] == "MISSED"


def test_the_side_by_side_reads_sqlmesh_s_batches_bar_not_its_other_bars():
    sys.path.insert(0, str(BENCH))
    try:
        import sqlmesh_side_by_side
    finally:
        sys.path.remove(str(BENCH))
    printed = (
        "Updating physical layer ━━━━━ 100.0% • 30/30 • 0:00:02\n"
        "Executing model batches ━━━━━ 96.7% • 29/30 • 0:00:41\n"
        "Updating virtual layer  ━━━━━ 100.0% • 30/30 • 0:00:01\n"
    )
    assert sqlmesh_side_by_side.EXECUTED_BATCHES.search(printed).groups() == ("29", "30")


@pytest.mark.slow
def test_the_floor_writes_every_model_after_its_parents_as_many_at_once_as_the_product(tmp_path, bench_modules, spark):
    _, _, floor, generate_project = bench_modules
    generate_project.generate_project(tmp_path, models=6, days=2)
    project = load_project(tmp_path, use_cache=False)
    started: dict[str, float] = {}
    threads: set[str] = set()

    class Recording:
        """The shared session, noting which thread ran each model's statement and when."""

        def sql(self, statement: str):
            for name in project.models:
                if f"{floor.floor_table(name, 'plain')} " in f"{statement} " and statement.startswith("CREATE "):
                    started[name] = time.perf_counter()
                    threads.add(threading.current_thread().name)
            return spark.sql(statement)

    try:
        seconds = floor.run_floor(Recording(), project, datetime(2024, 1, 1), datetime(2024, 1, 3),
                                  layout="plain", workers=2)
        assert set(seconds) == set(project.models)
        for name, model in project.models.items():
            assert all(started[parent] < started[name] for parent in model.depends_on & project.models.keys())
            assert spark.table(floor.floor_table(name, "plain")).count() > 0
        assert len(threads) == 2  # independent sources were written side by side
    finally:
        for schema in {floor.floor_table(name, "plain").split(".")[0] for name in project.models}:
            spark.sql(f"DROP SCHEMA IF EXISTS `{schema}` CASCADE")


def test_the_core_bench_sources_hold_the_daily_run_s_new_day(tmp_path, bench_modules):
    core_bench, _, _, generate_project = bench_modules

    class Arguments:
        days = 3

    generate_project.generate_project(tmp_path, models=6, days=core_bench.source_days(Arguments()))
    source = next(path for path in (tmp_path / "models").rglob("*.sql") if "kind FULL" in path.read_text())
    _, end = core_bench.backfill_window(Arguments.days)
    assert f"DATE'{end.date().isoformat()}'" in source.read_text()  # the day after the backfill has rows


@pytest.mark.slow
def test_the_daily_floor_appends_the_new_day_and_rebuilds_full_tables(tmp_path, bench_modules, spark):
    _, _, floor, generate_project = bench_modules
    generate_project.generate_project(tmp_path, models=6, days=3)
    project = load_project(tmp_path, use_cache=False)
    start, day, end = datetime(2024, 1, 1), datetime(2024, 1, 3), datetime(2024, 1, 4)
    try:
        floor.run_floor(spark, project, start, day, layout="plain", workers=2)
        before = {name: spark.table(floor.floor_table(name, "plain")).count() for name in project.models}
        written = floor.run_daily_floor(spark, project, start, day, end, workers=2)
        assert set(written) == {name for name, model in project.models.items() if model.kind_name != "VIEW"}
        for name, model in project.models.items():
            table = spark.table(floor.floor_table(name, "plain"))
            if model.kind_name == "INCREMENTAL_BY_TIME_RANGE":
                days = {row[0] for row in table.selectExpr(f"CAST({model.kind.time_column} AS DATE)").distinct().collect()}
                assert day.date() in days and table.where(f"{model.kind.time_column} < DATE'2024-01-03'").count() == before[name]
            elif model.kind_name == "FULL":  # rebuilt whole: what its query returns over [start, end), once
                lookup = {n: floor.floor_table(n, "plain") for n in project.models}
                query = render_query(model, start=start, end=end, execution_time=end, table_for=lookup,
                                     models=project.models)
                assert table.count() == spark.sql(query).count()
    finally:
        for schema in {floor.floor_table(name, "plain").split(".")[0] for name in project.models}:
            spark.sql(f"DROP SCHEMA IF EXISTS `{schema}` CASCADE")


def test_the_side_by_side_counts_a_model_equal_only_when_rows_and_checksums_agree():
    sys.path.insert(0, str(BENCH))
    try:
        from side_by_side_daily import compare_rows
        from sqlmesh_spark.digest import Digest
    finally:
        sys.path.remove(str(BENCH))

    def digest(rows: int, checksum: str) -> Digest:
        return Digest(columns=(("a", "int"),), rows=rows, column_checksums=(("a", checksum),), row_checksum=checksum)

    ours = {"s.same": digest(3, "7"), "s.other_rows": digest(3, "7"), "s.unread": digest(1, "1")}
    theirs = {"s.same": digest(3, "7"), "s.other_rows": digest(3, "8"), "s.unread": "AnalysisException: no view"}
    equal, different = compare_rows(ours, theirs)
    assert equal == 1
    assert [line.split(":")[0] for line in different] == ["s.other_rows", "s.unread"]
