"""Real runs on local Spark through Dagster: ranged partition runs, audits as checks, promotion gating."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest

pytest.importorskip("dagster_sparkmesh.engine.adapter")

from dagster_sparkmesh.dagster import (  # noqa: E402
    SparkMeshResource,
    SparkMeshTranslator,
    SparkMeshTranslatorSettings,
    build_sparkmesh_specs,
    promotion_key,
    sparkmesh_assets,
    sparkmesh_git_sensor,
)
from dagster_sparkmesh.dagster.promotion import promotion_asset  # noqa: E402
from dagster_sparkmesh.dagster.readers_sensor import sparkmesh_restated_readers_sensor  # noqa: E402
from dagster_sparkmesh.dagster.restatement import RESTATED_READERS_TAG  # noqa: E402
from dagster_sparkmesh.dagster.sensor_planner import StatePlanner  # noqa: E402
from dagster_sparkmesh.project.loader import load_project  # noqa: E402
from dagster_sparkmesh.state.store import open_state_store  # noqa: E402


PROJECT = Path(__file__).parent / "projects" / "shop"
AUTOMATIC = {"dagster/sensor_name": "some_sensor"}  # a run no person launched: it computes only what is missing
DAILY, FLAGS = dg.AssetKey(["shop", "daily"]), dg.AssetKey(["shop", "daily_flags"])
EVENTS, SUMMARY = dg.AssetKey(["raw", "events"]), dg.AssetKey(["shop", "summary"])


@pytest.fixture
def project_dir(tmp_path, clean_catalog) -> Path:
    target = tmp_path / "shop"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    return target


@pytest.fixture
def resource(spark, project_dir) -> SparkMeshResource:
    # Reuse the test session: a JVM holds one SparkContext, so point the project at the session's warehouse.
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    return SparkMeshResource(project_dir=str(project_dir), spark_config={"spark.sql.warehouse.dir": warehouse})


def _assets(project_dir: Path, translator: SparkMeshTranslator | None = None):
    project = load_project(project_dir, use_cache=False)
    specs = build_sparkmesh_specs(project, translator)
    return [*sparkmesh_assets(project=project, specs=specs, translator=translator), promotion_asset(project, specs)]


def _materialize(
    project_dir, resource, instance, selection, partitions: tuple[str, str] | None = None, translator=None, tags=None
):
    tags = dict(tags or {})
    if partitions:
        tags |= {"dagster/asset_partition_range_start": partitions[0], "dagster/asset_partition_range_end": partitions[1]}
    return dg.materialize(
        _assets(project_dir, translator),
        selection=selection,
        resources={"sparkmesh": resource},
        instance=instance,
        tags=tags,
        raise_on_error=False,
    )


def _intervals(project_dir: Path, name: str) -> list[tuple[datetime, datetime]]:
    with open_state_store(None, project_dir) as state:
        versions = {s.name: s.version for s in state.get_snapshots_by_name([name])}
        return [(i.start, i.end) for i in state.get_intervals(name, versions[name])]


def test_range_run_materializes_each_partition_and_records_the_interval(spark, project_dir, resource):
    with dg.instance_for_test() as instance:
        assert _materialize(project_dir, resource, instance, [EVENTS]).success
        result = _materialize(project_dir, resource, instance, [DAILY, FLAGS], ("2024-01-01", "2024-01-03"))
        assert result.success
        daily = [event.materialization for event in result.get_asset_materialization_events()]
        daily_partitions = sorted(m.partition for m in daily if m.asset_key == DAILY)
        assert daily_partitions == ["2024-01-01", "2024-01-02", "2024-01-03"]
        by_partition = {m.partition: m.metadata for m in daily if m.asset_key == DAILY}
        metadata = by_partition["2024-01-01"]
        assert {p: m["dagster/partition_row_count"].value for p, m in by_partition.items()} == {
            "2024-01-01": 1, "2024-01-02": 1, "2024-01-03": 1
        }
        # The range's total is said once, on its last partition, not repeated on every day.
        assert [p for p, m in by_partition.items() if "sparkmesh/range_rows_written" in m] == ["2024-01-03"]
        assert by_partition["2024-01-03"]["sparkmesh/range_rows_written"].value == 3
        # One table of the step's models, windows, rows and durations, once in the run.
        tables = [(m.asset_key, m.partition, m.metadata["sparkmesh/step_models"].value) for m in daily
                  if "sparkmesh/step_models" in m.metadata]
        assert len(tables) == 1 and tables[0][1] == "2024-01-03"
        lines = tables[0][2].splitlines()
        assert lines[0].startswith("| model | window | intervals | rows written | duration |")
        assert sorted(line.split(" | ")[0] for line in lines[2:]) == ["| `shop.daily_flags`", "| `shop.daily`"]
        assert "| `shop.daily` | 2024-01-01 → 2024-01-04 | 3 | 3 |" in tables[0][2]
        assert metadata["sparkmesh/range"].value == "[2024-01-01T00:00:00, 2024-01-04T00:00:00)"
        checks = result.get_asset_check_evaluations()
        assert [(c.check_name, c.passed) for c in checks] == [("not_null", True)]
        assert _intervals(project_dir, "shop.daily") == [(datetime(2024, 1, 1), datetime(2024, 1, 4))]
        table = metadata["sparkmesh/physical_table"].value
        assert spark.sql(f"SELECT COUNT(*) FROM {table}").collect()[0][0] == 3


def test_per_partition_row_counts_are_left_out_beyond_the_limit(spark, project_dir, resource):
    quiet = SparkMeshTranslator(SparkMeshTranslatorSettings(partition_row_counts_up_to=1))
    with dg.instance_for_test() as instance:
        assert _materialize(project_dir, resource, instance, [EVENTS]).success
        result = _materialize(project_dir, resource, instance, [DAILY], ("2024-01-01", "2024-01-02"), translator=quiet)
        assert result.success
        daily = [e.materialization for e in result.get_asset_materialization_events() if e.materialization.asset_key == DAILY]
        assert len(daily) == 2 and not [m for m in daily if "dagster/partition_row_count" in m.metadata]
        assert [m.metadata["sparkmesh/range_rows_written"].value for m in daily if "sparkmesh/range_rows_written" in m.metadata] == [2]


def test_promotion_waits_for_every_interval_then_points_the_views(spark, project_dir, resource):
    with dg.instance_for_test() as instance:
        _materialize(project_dir, resource, instance, [EVENTS])
        _materialize(project_dir, resource, instance, [DAILY, FLAGS], ("2024-01-01", "2024-01-03"))

        refused = _materialize(project_dir, resource, instance, [promotion_key("prod")])
        assert not refused.success
        step_failure = next(e for e in refused.all_events if e.is_step_failure).step_failure_data
        failure = step_failure.user_failure_data
        assert "shop.daily" in failure.metadata["missing_intervals"].value
        assert "shop.daily" in failure.metadata["models"].value
        # A refusal, not a crash: no chained exception from the core in the run log.
        assert step_failure.error.cause is None and "MissingIntervals" not in step_failure.error.to_string()
        assert not spark.catalog.databaseExists("shop")

        assert _materialize(project_dir, resource, instance, [DAILY, FLAGS], ("2024-01-04", "2024-01-05")).success
        assert _materialize(project_dir, resource, instance, [SUMMARY]).success
        promoted = _materialize(project_dir, resource, instance, [promotion_key("prod")])
        assert promoted.success
        views = promoted.get_asset_materialization_events()[0].materialization.metadata
        assert views["views_changed"].value == 4
        changes = views["changes"].value  # what the plan changes, as the CLI shows it
        assert "**Added**" in changes and "`shop.daily`" in changes and "`shop.summary`" in changes
        assert spark.sql("SELECT COUNT(*) FROM shop.daily").collect()[0][0] == 5
        assert spark.sql("SELECT grand_total FROM shop.summary").collect()[0][0] == 300


def test_failing_blocking_audit_stops_descendants_in_the_same_step(spark, project_dir, resource):
    daily = project_dir / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("SUM(amount) AS total", "SUM(CASE WHEN id > 5 THEN amount END) AS total"))
    with dg.instance_for_test() as instance:
        _materialize(project_dir, resource, instance, [EVENTS])
        result = _materialize(project_dir, resource, instance, [DAILY, FLAGS], ("2024-01-01", "2024-01-02"))
        assert not result.success
        assert result.get_asset_materialization_events() == []
        checks = result.get_asset_check_evaluations()
        assert [(c.check_name, c.passed, c.blocking) for c in checks] == [("not_null", False, True)]
        failure = next(e for e in result.all_events if e.is_step_failure).step_failure_data.user_failure_data
        assert failure.metadata["not_run_downstream"].value == ["shop.daily_flags"]
        with open_state_store(None, project_dir) as state:
            assert all(not state.get_intervals("shop.daily", s.version) for s in state.get_snapshots_by_name(["shop.daily"]))


def test_unpartitioned_run_logs_in_words_and_reports_the_table_rows(project_dir, resource):
    with dg.instance_for_test() as instance:
        result = _materialize(project_dir, resource, instance, [EVENTS])
        assert result.success
        [event] = result.get_asset_materialization_events()
        assert event.materialization.metadata["dagster/row_count"].value == 15
        messages = [entry.user_message for entry in instance.all_logs(result.run_id)]
        assert "building 1 model in environment `prod`: raw.events" in messages
        assert any(m.startswith("raw.events: rebuilt the table, 15 rows written in ") for m in messages)
        assert not any("None" in m or "interval" in m for m in messages if m.startswith(("building", "raw.events")))


def test_an_up_to_date_model_is_reported_unchanged_and_its_checks_evaluated_again(project_dir, resource):
    events = project_dir / "models" / "events.sql"
    events.write_text(events.read_text().replace("kind FULL", "kind FULL,\n  audits (not_null(columns := (id)))"))
    with dg.instance_for_test() as instance:
        first = _materialize(project_dir, resource, instance, [EVENTS])
        # With the promotion in the same run: an up-to-date model must not make Dagster skip the steps after it.
        again = _materialize(project_dir, resource, instance, [EVENTS, promotion_key("prod")], tags=AUTOMATIC)
        assert not [e.step_key for e in again.all_events if e.event_type_value == "STEP_SKIPPED"]
        assert [e.step_key for e in again.all_events if e.is_step_failure] == ["sparkmesh__promote_prod"]  # refused

        [before] = [e.materialization for e in first.get_asset_materialization_events() if e.asset_key == EVENTS]
        [after] = [e.materialization for e in again.get_asset_materialization_events() if e.asset_key == EVENTS]
        assert "sparkmesh/up_to_date" not in before.metadata
        assert after.metadata["sparkmesh/up_to_date"].value is True
        assert after.tags["dagster/data_version"] == before.tags["dagster/data_version"]  # unchanged data
        [check] = again.get_asset_check_evaluations()
        assert (check.check_name, check.passed) == ("not_null", True)
        assert "up to date" in check.metadata["sparkmesh/evaluated_on"].value
        messages = [entry.user_message for entry in instance.all_logs(again.run_id)]
        assert any(m.startswith("raw.events: already up to date") for m in messages)


def _clock_at(monkeypatch, moment: datetime) -> None:
    """Runs from now on plan and write at ``moment`` (the resource's contexts take it as their clock)."""
    opened = SparkMeshResource.open_context

    def open_context(self, environment, project=None):
        ctx = opened(self, environment, project)
        ctx.clock = lambda: moment
        return ctx

    monkeypatch.setattr(SparkMeshResource, "open_context", open_context)


def test_a_full_model_whose_query_and_inputs_did_not_change_is_kept_with_its_data_version(
    project_dir, resource, monkeypatch
):
    opened = SparkMeshResource.open_context
    with dg.instance_for_test() as instance:
        _clock_at(monkeypatch, datetime(2024, 1, 6))
        first = _materialize(project_dir, resource, instance, [EVENTS])
        monkeypatch.setattr(SparkMeshResource, "open_context", opened)
        _clock_at(monkeypatch, datetime(2024, 1, 7))  # a new day is due: SQLMesh would recompute the whole table
        again = _materialize(project_dir, resource, instance, [EVENTS], tags=AUTOMATIC)
        assert first.success and again.success
        [before] = [e.materialization for e in first.get_asset_materialization_events()]
        [after] = [e.materialization for e in again.get_asset_materialization_events()]
        assert "sparkmesh/recomputed" not in before.metadata
        assert after.metadata["sparkmesh/recomputed"].value.startswith("no: its query and every table it reads")
        assert after.tags["dagster/data_version"] == before.tags["dagster/data_version"]
        assert after.metadata["sparkmesh/intervals"].value == 6  # 2024-01-01 to 2024-01-07, recorded complete
        messages = [entry.user_message for entry in instance.all_logs(again.run_id)]
        assert any(m.startswith("raw.events: its query and every table it reads are unchanged") for m in messages)
    assert _intervals(project_dir, "raw.events")[-1][1] == datetime(2024, 1, 7)


def test_partitions_computed_before_their_parent_has_them_fail_instead_of_showing_materialized(
    spark, project_dir, resource
):
    """shop.daily_flags over a day shop.daily does not have yet: that day reads nothing, so it stays missing, and
    Dagster is told so (a failed step naming the gap), not shown a materialized partition the state store lacks."""
    with dg.instance_for_test() as instance:
        assert _materialize(project_dir, resource, instance, [EVENTS]).success
        assert _materialize(project_dir, resource, instance, [DAILY], ("2024-01-01", "2024-01-01")).success
        result = _materialize(project_dir, resource, instance, [FLAGS], ("2024-01-01", "2024-01-02"))
        assert not result.success
        assert not [e for e in result.get_asset_materialization_events() if e.materialization.asset_key == FLAGS]
        failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
        message = failure.event_specific_data.error.message
        assert "shop.daily_flags: 1 interval(s) computed while a parent lacked them" in message
        assert _intervals(project_dir, "shop.daily_flags") == [(datetime(2024, 1, 1), datetime(2024, 1, 2))]


def _with_a_landing_source(spark, project_dir: Path) -> None:
    """``shop.daily`` also reads ``landing.orders``, an external table where late rows arrive."""
    spark.sql("CREATE DATABASE IF NOT EXISTS landing")
    spark.sql("CREATE TABLE landing.orders USING parquet AS SELECT DATE'2024-01-02' AS ds, 7 AS id, 70 AS amount")
    daily = project_dir / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("FROM raw.events", "FROM (SELECT * FROM raw.events UNION ALL SELECT * FROM landing.orders)"))
    (project_dir / "external_models.yaml").write_text("- name: landing.orders\n  columns: {ds: date, id: int, amount: int}\n")


def test_a_persons_range_with_gaps_restates_what_it_holds_and_computes_the_gaps(spark, project_dir, resource):
    """A person's range over complete days and missing ones: the complete ones are recomputed (late rows show),
    the missing ones computed; a model whose selection holds nothing yet is only computed."""
    _with_a_landing_source(spark, project_dir)
    with dg.instance_for_test() as instance:
        assert _materialize(project_dir, resource, instance, [EVENTS]).success
        assert _materialize(project_dir, resource, instance, [DAILY], ("2024-01-01", "2024-01-03")).success
        spark.sql("INSERT INTO landing.orders VALUES (DATE'2024-01-02', 8, 1000)")  # late rows for a complete day

        run = _materialize(project_dir, resource, instance, [DAILY, FLAGS], ("2024-01-02", "2024-01-04"))
        assert run.success
        daily = [e.materialization for e in run.get_asset_materialization_events() if e.materialization.asset_key == DAILY]
        table = daily[0].metadata["sparkmesh/physical_table"].value
        totals = dict(spark.sql(f"SELECT CAST(ds AS STRING), total FROM {table}").collect())
        assert totals == {"2024-01-01": 60, "2024-01-02": 60 + 70 + 1000, "2024-01-03": 60, "2024-01-04": 60}
        assert _intervals(project_dir, "shop.daily") == [(datetime(2024, 1, 1), datetime(2024, 1, 5))]
        assert _intervals(project_dir, "shop.daily_flags") == [(datetime(2024, 1, 2), datetime(2024, 1, 5))]
        messages = [entry.user_message for entry in instance.all_logs(run.run_id)]
        assert any(m.startswith("sparkmesh: restating shop.daily [2024-01-02, ") for m in messages), messages
        assert not any(m.startswith("sparkmesh: restating") and "shop.daily_flags [" in m.split("readers")[0]
                       for m in messages if m.startswith("sparkmesh: restating"))


def test_a_persons_materialization_of_a_complete_partition_restates_it_and_its_readers(spark, project_dir, resource):
    """Late data in a source: materializing the partition again from the UI recomputes it (prod's view shows the new
    number at once) and restates its readers' intervals over it; the run log says so."""
    _with_a_landing_source(spark, project_dir)
    with dg.instance_for_test() as instance:
        assert _materialize(project_dir, resource, instance, [EVENTS]).success
        assert _materialize(project_dir, resource, instance, [DAILY, FLAGS], ("2024-01-01", "2024-01-05")).success
        assert _materialize(project_dir, resource, instance, [SUMMARY, promotion_key("prod")]).success
        before = spark.sql("SELECT total FROM shop.daily WHERE ds = DATE'2024-01-02'").collect()[0][0]

        spark.sql("INSERT INTO landing.orders VALUES (DATE'2024-01-02', 8, 1000)")  # late rows for one day
        again = _materialize(project_dir, resource, instance, [DAILY], ("2024-01-02", "2024-01-02"))
        assert again.success
        after = spark.sql("SELECT total FROM shop.daily WHERE ds = DATE'2024-01-02'").collect()[0][0]
        assert after == before + 1000  # prod's view reads the restated table: no new plan, no promotion
        messages = [entry.user_message for entry in instance.all_logs(again.run_id)]
        assert "sparkmesh: restating shop.daily [2024-01-02, 2024-01-03) (a materialization launched by a person recomputes complete partitions)" in messages
        assert any(m.startswith("sparkmesh: readers restated with it") and "shop.daily_flags [2024-01-02, 2024-01-03)" in m
                   for m in messages)
        flags = _intervals(project_dir, "shop.daily_flags")
        assert (datetime(2024, 1, 2), datetime(2024, 1, 3)) not in [(s, e) for s, e in flags if e - s == timedelta(days=1)] \
            and not any(s <= datetime(2024, 1, 2) < e for s, e in flags)  # to compute again, from the new totals

        assert instance.get_run_by_id(again.run_id).tags[RESTATED_READERS_TAG] == "prod"

        # The readers the person's run did not compute: the restated readers' sensor requests their runs.
        requests = _restated_readers_tick(project_dir, resource, instance)
        assert {tuple(r.asset_selection): r.tags.get("dagster/asset_partition_range_start") for r in requests} == {
            (FLAGS,): "2024-01-02", (SUMMARY,): None,
        }
        for request in requests:
            assert _materialize(project_dir, resource, instance, list(request.asset_selection),
                                _range_of(request), tags=request.tags | AUTOMATIC).success
        assert (datetime(2024, 1, 2), datetime(2024, 1, 3)) in _day_intervals(project_dir, "shop.daily_flags")
        grand_total = spark.sql("SELECT grand_total FROM shop.summary").collect()[0][0]
        assert grand_total == spark.sql("SELECT SUM(total) FROM shop.daily").collect()[0][0]  # late rows reached prod
        assert _restated_readers_tick(project_dir, resource, instance) == []  # once

        automatic = _materialize(project_dir, resource, instance, [DAILY], ("2024-01-03", "2024-01-03"), tags=AUTOMATIC)
        messages = [entry.user_message for entry in instance.all_logs(automatic.run_id)]
        assert not any("restating" in m for m in messages)  # automatic runs never restate
        assert RESTATED_READERS_TAG not in instance.get_run_by_id(automatic.run_id).tags


_READERS_CURSOR: dict[str, str | None] = {}


def _restated_readers_tick(project_dir: Path, resource, instance) -> list[dg.RunRequest]:
    """One evaluation of the restated readers' sensor as the daemon makes it; its cursor kept per project."""
    project = load_project(project_dir, use_cache=False)
    sensor = sparkmesh_restated_readers_sensor(
        environment="prod", load_project=lambda: project, planner=StatePlanner("prod", None),
    )
    defs = dg.Definitions(assets=_assets(project_dir), sensors=[sensor], resources={"sparkmesh": resource})
    context = dg.build_sensor_context(cursor=_READERS_CURSOR.get(str(project_dir)), instance=instance, definitions=defs)
    result = sensor.evaluate_tick(context)
    _READERS_CURSOR[str(project_dir)] = result.cursor
    return list(result.run_requests or [])


def _range_of(request: dg.RunRequest) -> tuple[str, str] | None:
    start = request.tags.get("dagster/asset_partition_range_start")
    return (start, request.tags["dagster/asset_partition_range_end"]) if start else None


def _day_intervals(project_dir: Path, name: str) -> list[tuple[datetime, datetime]]:
    return [(day, day + timedelta(days=1)) for start, end in _intervals(project_dir, name)
            for day in _days(start, end)]


def _days(start: datetime, end: datetime):
    while start < end:
        yield start
        start += timedelta(days=1)


def test_a_partition_whose_parent_was_never_built_fails_naming_the_parent(project_dir, resource):
    with dg.instance_for_test() as instance:
        result = _materialize(project_dir, resource, instance, [DAILY], ("2024-01-02", "2024-01-02"))
        assert not result.success
        [failure] = [e for e in result.all_events if e.is_step_failure]
        error = failure.step_failure_data.error
        assert error.message.startswith(
            "dagster._core.definitions.events.Failure: cannot compute shop.daily: parent raw.events has never been built\n"
        )
        assert "hint: build raw.events first" in error.message and "TABLE_OR_VIEW_NOT_FOUND" not in error.message
        assert error.cause is None  # no chained stack of the core
    assert _intervals(project_dir, "shop.daily") == []


def test_a_promotion_refused_after_a_failed_blocking_audit_names_the_audit_first(project_dir, resource):
    daily = project_dir / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace(
        "audits (not_null(columns := (ds, total)))",
        "audits (not_null(columns := (ds, total)), accepted_range(column := total, min_v := 100000))",
    ))
    with dg.instance_for_test() as instance:
        assert _materialize(project_dir, resource, instance, [EVENTS]).success
        assert not _materialize(project_dir, resource, instance, [DAILY, FLAGS], ("2024-01-01", "2024-01-05")).success
        refused = _materialize(project_dir, resource, instance, [promotion_key("prod")])
        [failure] = [e for e in refused.all_events if e.is_step_failure]
        message = failure.step_failure_data.error.message
        assert message.startswith(
            "dagster._core.definitions.events.Failure: blocking audit accepted_range of shop/daily failed (run "
        ), message
        assert ", 5 failing row(s)): " in message and "missing intervals" in message


def test_a_failed_batch_fails_only_its_window_and_a_revert_clears_the_failed_partitions(spark, project_dir, resource):
    """Batches that passed their audits before one failed are materialized; the failed batch, the window after it
    and the readers' partitions fail. After a revert, the git sensor reports the failed partitions materialized at
    the version the environment serves (complete already), so no partition stays red."""
    daily = project_dir / "models" / "daily.sql"
    daily.write_text(daily.read_text()
                     .replace("(time_column ds)", "(time_column ds, batch_size 1)")
                     .replace("audits (not_null(columns := (ds, total)))",
                              "audits (not_null(columns := (ds, total)), accepted_range(column := total, min_v := 0))"))
    _git(project_dir, "init", "-q")
    _commit(project_dir, "good")
    days = [f"2024-01-0{day}" for day in range(1, 6)]
    with dg.instance_for_test() as instance:
        assert _materialize(project_dir, resource, instance, [EVENTS]).success
        assert _materialize(project_dir, resource, instance, [DAILY, FLAGS], (days[0], days[-1])).success
        assert _materialize(project_dir, resource, instance, [SUMMARY, promotion_key("prod")]).success

        daily.write_text(daily.read_text().replace("SUM(amount) AS total", "SUM(amount) - IF(ds = DATE'2024-01-04', 1000, 0) AS total"))
        _commit(project_dir, "bad on 2024-01-04")
        failed = _materialize(project_dir, resource, instance, [DAILY, FLAGS], (days[0], days[-1]))
        assert not failed.success
        assert _statuses(project_dir, instance, DAILY) == ["MATERIALIZED"] * 3 + ["FAILED"] * 2
        assert _statuses(project_dir, instance, FLAGS) == ["FAILED"] * 5  # not computed: their parent failed

        _git(project_dir, "revert", "--no-edit", "HEAD")
        sensor = sparkmesh_git_sensor(project_dir=project_dir, environment="prod", approval="none",
                                      load_project=lambda: load_project(project_dir, use_cache=False),
                                      planner=StatePlanner("prod", None))
        defs = dg.Definitions(assets=_assets(project_dir), sensors=[sensor], resources={"sparkmesh": resource})
        tick = sensor.evaluate_tick(dg.build_sensor_context(instance=instance, definitions=defs))
        assert not tick.run_requests and "nothing to do" in tick.skip_message
        for event in tick.asset_events:  # what the daemon does with a tick's events
            instance.report_runless_asset_event(event)
        assert _statuses(project_dir, instance, DAILY) == ["MATERIALIZED"] * 5
        assert _statuses(project_dir, instance, FLAGS) == ["MATERIALIZED"] * 5
        assert {e.partition for e in tick.asset_events if e.asset_key == FLAGS} == set(days)


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": os.environ["PATH"]}
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env).stdout.strip()


def _commit(repo: Path, message: str) -> None:
    (repo / ".gitignore").write_text(".sparkmesh/\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", message)


def _statuses(project_dir: Path, instance, key: dg.AssetKey) -> list[str]:
    specs = build_sparkmesh_specs(load_project(project_dir, use_cache=False))
    partitions_def = specs.group_of(specs.model_by_key[key]).partitions_def
    keys = [f"2024-01-0{day}" for day in range(1, 6)]
    statuses = instance.get_status_by_partition(key, keys, partitions_def)
    return [statuses[k].value if statuses[k] else "MISSING" for k in keys]
