"""plan / run / environments / invalidate / janitor / rollback / plans through click, on real local Spark."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from dagster_sparkmesh.cli.runtime_commands import plan_window
from dagster_sparkmesh.plan.rollback import rollback_plan
from dagster_sparkmesh.snapshot.records import Environment, EnvironmentSnapshot
from dagster_sparkmesh.state.store import open_state_store

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
CountingFactory, cli, invoke = harness.CountingFactory, harness.cli, harness.invoke

WINDOW = ["--start", "2024-01-01", "--end", "2024-01-03"]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return harness.write_tiny_project(tmp_path / "tiny")


def _state(project: Path):
    return open_state_store(None, project)


def test_explain_prints_the_steps_and_changes_nothing(tiny):
    result, factory = invoke(tiny, ["plan", "--explain", *WINDOW])

    assert result.exit_code == 0, result.output
    assert "Added" in result.output and "shop.daily" in result.output
    assert "Explanation" in result.output
    assert "compute shop.daily into sparkmesh__shop.shop__daily__v" in result.output
    assert "create view shop.daily -> sparkmesh__shop.shop__daily__v" in result.output
    assert factory.calls == 0
    with _state(tiny) as state:
        assert state.list_environments() == [] and state.all_snapshots() == []
        assert state.list_plan_applications() == []


def test_answering_no_or_no_prompts_does_not_apply(tiny):
    answered, _ = invoke(tiny, ["plan", *WINDOW], input="n\n")
    silent, factory = invoke(tiny, ["plan", "--no-prompts", *WINDOW])

    assert "Apply - Backfill Tables [y/n]" in answered.output
    assert "Plan not applied" in answered.output and "Plan not applied" in silent.output
    assert "[y/n]" not in silent.output
    assert factory.calls == 0
    with _state(tiny) as state:
        assert state.list_environments() == []


def test_run_needs_an_existing_environment(tiny):
    result = CliRunner().invoke(cli(tiny, CountingFactory()), ["run", "dev"])

    assert result.exit_code == 2
    assert "environment `dev` does not exist" in result.output
    assert "sparkmesh plan dev" in result.output


def test_prod_cannot_be_invalidated(tiny):
    result = CliRunner().invoke(cli(tiny, CountingFactory()), ["invalidate", "prod"])
    assert result.exit_code == 2 and "prod cannot be invalidated" in result.output


def test_an_end_given_as_a_date_includes_that_day():
    start, end = plan_window("2024-01-01", "2024-01-03")
    assert (start.day, end.day) == (1, 4)
    assert plan_window(None, "2024-01-03 05:00") == (None, end.replace(day=3, hour=5))


def test_rollback_plan_restores_the_previous_snapshots_under_a_new_plan_id():
    from datetime import datetime, timedelta

    snapshot = EnvironmentSnapshot(name="shop.daily", fingerprint="f1", version="v1", kind_name="FULL")
    previous = Environment(name="dev", plan_id="old", snapshots=(snapshot,), start=datetime(2024, 1, 1),
                           promoted_at=datetime(2024, 1, 2))
    current = previous.model_copy(update={"plan_id": "new", "snapshots": ()})
    now = datetime(2024, 2, 1)

    plan = rollback_plan(current, previous, now=now, ttl=timedelta(days=7))

    assert plan.previous_plan_id == "new" and plan.plan_id not in {"old", "new"}
    assert plan.environment_after.snapshots == (snapshot,)
    assert plan.environment_after.expires_at == now + timedelta(days=7)
    assert not plan.missing_intervals and not plan.new_snapshots


def _rows(spark, sql: str) -> list[tuple]:
    return [tuple(row) for row in spark.sql(sql).collect()]


def test_plan_apply_dev_change_diff_promote_and_rollback(tiny, spark, engine, clean_catalog):
    applied, _ = invoke(tiny, ["plan", "prod", "--auto-apply", *WINDOW], engine)
    assert applied.exit_code == 0, applied.output
    assert "Applied plan" in applied.output
    assert "intervals computed" in applied.output and "rows written" in applied.output
    assert "create shop.daily" in applied.output
    assert _rows(spark, "SELECT ds, total FROM shop.daily ORDER BY ds")[0][1] == 60

    again, factory = invoke(tiny, ["plan", *WINDOW])
    assert "No changes to plan" in again.output
    assert factory.calls == 0, "a no-op plan must not start Spark"

    listed, _ = invoke(tiny, ["environments"])
    assert "prod" in listed.output and "never" in listed.output

    daily = tiny / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("SUM(amount) AS total", "SUM(amount) * 2 AS total"))
    dev, _ = invoke(tiny, ["plan", "dev", "--auto-apply", *WINDOW], engine)
    assert dev.exit_code == 0, dev.output
    assert "Directly modified" in dev.output and "SUM(amount) * 2" in dev.output
    assert _rows(spark, "SELECT SUM(total) FROM shop__dev.daily") == [(360,)]
    assert _rows(spark, "SELECT SUM(total) FROM shop.daily") == [(180,)], "dev never changes prod"

    diff, _ = invoke(tiny, ["table-diff", "prod:dev", "shop.daily", "--show-sample"], engine)
    assert diff.exit_code == 0, diff.output
    assert "total" in diff.output and "The tables differ" in diff.output
    # raw.events is unchanged: dev has no view of it (SQLMesh's default), and the diff reads the table dev reads.
    assert not spark.catalog.tableExists("raw__dev.events") and spark.catalog.tableExists("shop__dev.daily")
    same, _ = invoke(tiny, ["table-diff", "prod:dev", "raw.events", "--on", "ds", "--on", "id"], engine)
    assert same.exit_code == 0, same.output
    assert "No differences" in same.output

    fetched, _ = invoke(tiny, ["fetchdf", "SELECT ds, total FROM shop__dev.daily ORDER BY ds", "--json"], engine)
    assert json.loads(fetched.output)[0] == {"ds": "2024-01-01", "total": 120}

    promoted, _ = invoke(tiny, ["plan", "prod", "--auto-apply", *WINDOW], engine)
    assert promoted.exit_code == 0, promoted.output
    assert "Missing intervals" not in promoted.output
    assert re.search(r"intervals computed\s+0\b", promoted.output), "promotion recomputes nothing"
    assert _rows(spark, "SELECT SUM(total) FROM shop.daily") == [(360,)]

    rolled, _ = invoke(tiny, ["rollback", "prod"], engine)
    assert rolled.exit_code == 0, rolled.output
    assert "alter shop.daily" in rolled.output
    assert _rows(spark, "SELECT SUM(total) FROM shop.daily") == [(180,)]

    log, _ = invoke(tiny, ["plans"])
    assert log.output.count("succeeded") == 4

    up_to_date, _ = invoke(tiny, ["run", "dev"])
    assert "up to date" in up_to_date.output

    invalidated, _ = invoke(tiny, ["invalidate", "dev"])
    assert "invalidated" in invalidated.output
    swept, _ = invoke(tiny, ["janitor"], engine)
    assert "environments dropped: dev" in swept.output
    assert "shop__dev" not in [name for (name,) in _rows(spark, "SHOW DATABASES")]


def test_run_refuses_a_project_that_differs_from_the_environment(tiny, engine, clean_catalog):
    invoke(tiny, ["plan", "--auto-apply", *WINDOW], engine)
    daily = tiny / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("COUNT(*) AS orders", "COUNT(*) AS orders, 1 AS one"))

    result = CliRunner().invoke(cli(tiny, CountingFactory()), ["run"])

    assert result.exit_code == 2
    assert "the project differs from the `prod` environment" in result.output
    assert "directly modified: shop.daily" in result.output
