"""Forward-only changes previewed in development environments on tables of their own (``plan.previews``).

Plans applied by the real executor (``tests/plan/real_world.py``); tests/execution/test_previews.py checks the rows.
"""

from datetime import datetime as dt
from pathlib import Path

import pytest

from dagster_sparkmesh.cli.plan_view import explain_steps
from dagster_sparkmesh.plan.builder import build_plan
from dagster_sparkmesh.plan.environment_intervals import environment_check_plan
from dagster_sparkmesh.plan.explain import format_plan
from dagster_sparkmesh.plan.previews import preview_version
from dagster_sparkmesh.snapshot.naming import is_preview_version, physical_table
from dagster_sparkmesh.snapshot.records import ChangeCategory, Interval
from tests.plan.conftest import NOW, make_project


TIME_RANGE = {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds"}
FORWARD_ONLY = {"kind": {**TIME_RANGE, "forward_only": True}}


def days(first: int, last: int) -> tuple[Interval, ...]:
    return tuple(Interval(start=dt(2024, 1, d), end=dt(2024, 1, d + 1)) for d in range(first, last + 1))


@pytest.fixture
def shop(model):
    """raw → orders (forward-only kind) → revenue (incremental), summary (FULL); daily from 2024-01-01."""

    def build(orders="SELECT id, ds FROM s.raw", revenue="SELECT COUNT(*) AS n, ds FROM s.orders GROUP BY ds"):
        return [
            model("s.raw", "SELECT id, ds FROM src.events", ["src.events"]),
            model("s.orders", orders, ["s.raw"], **FORWARD_ONLY),
            model("s.revenue", revenue, ["s.orders"]),
            model("s.summary", "SELECT COUNT(*) AS n FROM s.orders", ["s.orders"], kind={"name": "FULL"}),
        ]

    return build


CHANGED = "SELECT id, ds FROM s.raw WHERE id > 0"


def test_dev_previews_the_last_day_on_tables_prod_never_uses(world, shop):
    prod = world.apply(*shop())
    plan = world.apply(*shop(orders=CHANGED), environment="dev")

    assert plan.categories["s.orders"] is ChangeCategory.FORWARD_ONLY
    # The changed model and every descendant (incremental or FULL) are previewed; the unchanged parent is not.
    assert set(plan.previews) == {"s.orders", "s.revenue", "s.summary"}
    assert plan.previews["s.orders"] == Interval(start=dt(2024, 1, 9), end=dt(2024, 1, 10))
    for name in plan.previews:
        pushed = next(s for s in plan.new_snapshots if s.name == name)
        assert pushed.version == prod.version_of(name)  # the snapshot prod will reuse keeps the shared version
        assert plan.version_of(name) == preview_version(pushed) != prod.version_of(name)
        assert is_preview_version(plan.version_of(name))
    assert plan.version_of("s.raw") == prod.version_of("s.raw")
    assert plan.missing_intervals["s.orders"] == days(9, 9) and plan.missing_intervals["s.revenue"] == days(9, 9)
    # A FULL preview reads its parents' previews: it holds (and lists) the preview range only.
    assert plan.missing_intervals["s.summary"] == days(9, 9)
    assert plan.environment_after.preview_start == dt(2024, 1, 9, 6, 30)

    shared = world.state.get_intervals("s.orders", prod.version_of("s.orders"))
    assert shared == [Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))]
    assert world.state.get_intervals("s.orders", plan.version_of("s.orders")) == list(days(9, 9))


def test_plan_text_and_explanation_label_previews(world, shop):
    world.apply(*shop())
    plan = world.plan(*shop(orders=CHANGED), environment="dev")
    table = physical_table("s.orders", plan.version_of("s.orders"))

    text = format_plan(plan)
    assert f"s.orders (preview): [2024-01-09, 2024-01-10) on {table}" in text
    assert "Forward-only previews (this environment only; prod keeps its tables)" in text
    assert "s.orders (preview): [2024-01-09, 2024-01-10) (1 interval)" in text
    assert "s.raw (preview)" not in text
    assert f"compute s.orders (preview) into {table}: [2024-01-09, 2024-01-10)" in explain_steps(plan, None)


def test_start_and_end_set_the_preview_range(world, shop):
    world.apply(*shop())
    plan = world.plan(*shop(orders=CHANGED), environment="dev", start="2024-01-03", end="2024-01-05")
    assert plan.previews["s.orders"] == Interval(start=dt(2024, 1, 3), end=dt(2024, 1, 5))
    assert plan.missing_intervals["s.orders"] == days(3, 4)

    only_end = world.plan(*shop(orders=CHANGED), environment="dev", end="2024-01-05")
    assert only_end.missing_intervals["s.orders"] == days(4, 4)  # the last day before the end


def test_preview_days_setting(world, shop):
    world.apply(*shop())
    project = make_project(*shop(orders=CHANGED))
    project = project.model_copy(update={"config": project.config.model_copy(update={"preview_days": 3})})
    plan = build_plan(project, world.state, "dev", execution_time=NOW)
    assert plan.missing_intervals["s.orders"] == days(7, 9)


def test_a_monthly_model_previews_its_last_complete_month(world, model):
    monthly = {"cron": "@monthly", "start": "2023-11-01", **FORWARD_ONLY}
    world.apply(model("s.m", "SELECT id, ds FROM src.e", ["src.e"], **monthly))
    plan = world.plan(model("s.m", "SELECT id + 1 AS id, ds FROM src.e", ["src.e"], **monthly), environment="dev")
    assert plan.missing_intervals["s.m"] == (Interval(start=dt(2023, 12, 1), end=dt(2024, 1, 1)),)


def test_two_dev_environments_share_a_preview(world, shop):
    world.apply(*shop())
    first = world.apply(*shop(orders=CHANGED), environment="dev")
    second = world.plan(*shop(orders=CHANGED), environment="dev2")
    assert second.version_of("s.orders") == first.version_of("s.orders")
    assert "s.orders" not in second.missing_intervals  # already computed by dev


def test_prod_reuses_the_shared_table_and_never_the_preview(world, shop):
    prod = world.apply(*shop())
    world.apply(*shop(orders=CHANGED), environment="dev")

    promoted = world.apply(*shop(orders=CHANGED))
    assert promoted.previews == {} and promoted.environment_after.preview_start is None
    for snapshot in promoted.environment_after.snapshots:
        assert snapshot.version == prod.version_of(snapshot.name)
        assert not is_preview_version(snapshot.version)
    assert promoted.missing_intervals == {}  # forward-only: the history is not recomputed

    later = world.plan(*shop(orders=CHANGED), execution_time=dt(2024, 1, 11, 1))
    assert later.missing_intervals["s.orders"] == days(10, 10)  # new intervals only, on the shared table
    # Once prod holds the change, a new development environment reads prod's tables again: no preview.
    fresh = world.plan(*shop(orders=CHANGED), environment="dev3")
    assert fresh.previews == {} and fresh.version_of("s.orders") == prod.version_of("s.orders")


def test_prod_computes_a_previewed_breaking_child_over_its_whole_history(world, shop):
    prod = world.apply(*shop())
    edited = shop(orders=CHANGED, revenue="SELECT COUNT(*) AS n, MAX(id) AS top, ds FROM s.orders GROUP BY ds")
    dev = world.apply(*edited, environment="dev")
    new_version = next(s.version for s in dev.new_snapshots if s.name == "s.revenue")
    assert new_version != prod.version_of("s.revenue") and "s.revenue" in dev.previews
    assert dev.missing_intervals["s.revenue"] == days(9, 9)

    promoted = world.plan(*edited)
    assert promoted.version_of("s.revenue") == new_version
    assert promoted.missing_intervals == {"s.revenue": days(1, 9)}  # the preview held one day: never reused


def test_checking_dev_keeps_its_preview_range(world, shop):
    world.apply(*shop())
    world.apply(*shop(orders=CHANGED), environment="dev")

    def check(at):
        return environment_check_plan(
            world.state, "dev", config=make_project().config, project_path=Path("."), execution_time=at
        )

    assert check(NOW).missing_intervals == {}
    assert check(dt(2024, 1, 11, 1)).missing_intervals["s.orders"] == days(10, 10)


def test_models_held_back_by_a_selection_are_not_previewed(world, shop, model):
    prod = world.apply(*shop())
    edited = [model("s.raw", "SELECT id, ds FROM src.events WHERE id > 1", ["src.events"]), *shop(orders=CHANGED)[1:]]
    plan = world.plan(*edited, environment="dev", forward_only=True, selected=["s.raw"])
    assert set(plan.previews) == {"s.raw"}
    assert plan.version_of("s.orders") == prod.version_of("s.orders")


def test_a_restatement_in_dev_stays_within_the_preview_range(world, shop):
    world.apply(*shop())
    world.apply(*shop(orders=CHANGED), environment="dev")
    plan = world.plan(*shop(orders=CHANGED), environment="dev", restate_models=["s.orders"])
    assert plan.restatements["s.orders"] == Interval(start=dt(2024, 1, 9), end=dt(2024, 1, 10))  # not since the 1st
    assert plan.missing_intervals["s.orders"] == days(9, 9)
