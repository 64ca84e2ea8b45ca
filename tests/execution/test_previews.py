"""On Spark, with SQLite and PostgreSQL state: a forward-only change is previewed in dev on tables of its own,
prod then reuses its old tables (never the preview), and the janitor drops preview tables once no environment
points at them (dev moved on to another change, then expired)."""

import uuid
from datetime import date, datetime, timedelta

import pytest
import sqlalchemy as sa

from dagster_sparkmesh.clock import utc_now
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.janitor import run_janitor
from dagster_sparkmesh.plan.explain import format_plan
from dagster_sparkmesh.snapshot.naming import is_preview_version, physical_table
from dagster_sparkmesh.snapshot.records import Interval
from tests.execution.test_apply import END, START, _rows, _view_target

POSTGRES_URL = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"
MODELS = ("raw.events", "shop.daily", "shop.summary", "shop.big_days")
PREVIEWED = ("shop.daily", "shop.summary", "shop.big_days")


@pytest.fixture(params=["sqlite", "postgres"])
def open_context(request, make_context, mini_project):
    """Contexts on one state store per test: a SQLite file in the project, or a PostgreSQL schema of its own."""
    schema = f"preview_test_{uuid.uuid4().hex[:12]}" if request.param == "postgres" else None
    url = POSTGRES_URL if schema else None
    yield lambda environment: make_context(mini_project, environment, state_url=url, schema=schema)
    if schema:
        postgres = sa.create_engine(POSTGRES_URL)
        with postgres.begin() as connection:
            connection.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        postgres.dispose()


def test_forward_only_change_is_previewed_in_dev_and_never_reused_by_prod(spark, mini_project, open_context):
    prod = open_context("prod")
    first = plan_for(prod, START, END)
    apply_plan(prod, first)
    shared = {name: first.version_of(name) for name in MODELS}
    prod_rows = _rows(spark, "SELECT ds, total FROM shop.daily ORDER BY ds")
    assert len(prod_rows) == 5 and {total for _, total in prod_rows} == {60}

    daily = mini_project / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("SUM(amount) AS total", "SUM(amount) * 2 AS total"))
    dev = open_context("dev")
    plan = plan_for(dev, None, END, forward_only=True)  # no --start: the default preview, the last day
    assert set(plan.previews) == set(PREVIEWED)
    assert plan.missing_intervals["shop.daily"] == (Interval(start=datetime(2024, 1, 5), end=END),)
    assert "shop.daily (preview): [2024-01-05, 2024-01-06)" in format_plan(plan)
    previews = {name: physical_table(name, plan.version_of(name)) for name in PREVIEWED}

    apply_plan(dev, plan)

    # dev reads the new query over the preview range, through the preview tables, descendants included.
    assert _view_target(spark, "shop__dev.daily") == previews["shop.daily"]
    assert _rows(spark, "SELECT ds, total FROM shop__dev.daily") == [(date(2024, 1, 5), 120)]
    assert _rows(spark, "SELECT grand_total, days FROM shop__dev.summary") == [(120, 1)]
    assert _rows(spark, "SELECT ds, total FROM shop__dev.big_days") == [(date(2024, 1, 5), 120)]
    # prod: same views, same rows, same intervals on the shared tables.
    assert _view_target(spark, "shop.daily") == physical_table("shop.daily", shared["shop.daily"])
    assert _rows(spark, "SELECT ds, total FROM shop.daily ORDER BY ds") == prod_rows
    assert _rows(spark, f"SELECT COUNT(*) FROM {physical_table('shop.daily', shared['shop.daily'])}") == [(5,)]
    assert dev.state.get_intervals("shop.daily", shared["shop.daily"]) == [Interval(start=START, end=END)]
    preview_intervals = dev.state.get_intervals("shop.daily", plan.version_of("shop.daily"))
    assert preview_intervals == list(plan.missing_intervals["shop.daily"])

    to_prod = open_context("prod")
    promoted = plan_for(to_prod, START, END, forward_only=True)
    assert promoted.previews == {} and promoted.missing_intervals == {}
    result = apply_plan(to_prod, promoted)
    assert all(model.skipped for model in result.models)  # nothing recomputed, the preview tables not read
    for name in MODELS:
        assert not is_preview_version(promoted.version_of(name))
        assert _view_target(spark, name) == physical_table(name, shared[name])
    assert _rows(spark, "SELECT ds, total FROM shop.daily ORDER BY ds") == prod_rows

    # dev moves on to another change: its first preview tables are orphans now (their snapshots are prod's).
    daily.write_text(daily.read_text().replace("SUM(amount) * 2 AS total", "SUM(amount) * 3 AS total"))
    moved = open_context("dev")
    replanned = plan_for(moved, None, END, forward_only=True)
    apply_plan(moved, replanned)
    assert _rows(spark, "SELECT ds, total FROM shop__dev.daily") == [(date(2024, 1, 5), 180)]
    current = {name: physical_table(name, replanned.version_of(name)) for name in PREVIEWED}
    assert set(current.values()).isdisjoint(previews.values())

    janitor = open_context("dev")
    janitor.state.invalidate_environment("dev")
    janitor.clock = lambda: utc_now() + timedelta(days=30)  # invalidation stamps the state store's real clock
    report = run_janitor(janitor)

    dropped = set(previews.values()) | set(current.values())  # the orphans and those of the expired dev
    assert dropped <= set(report.tables_dropped)
    for table in dropped:
        assert not spark.catalog.tableExists(table)
    for version in (plan.version_of("shop.daily"), replanned.version_of("shop.daily")):
        assert janitor.state.get_intervals("shop.daily", version) == []
    assert janitor.state.get_intervals("shop.daily", shared["shop.daily"]) == [Interval(start=START, end=END)]
    assert _rows(spark, "SELECT grand_total FROM shop.summary") == [(300,)]
