"""The planner and SCD type 2 kinds: merged per run like unique-key models; never restated by default (as in
SQLMesh), restated as a whole table where the kind allows it."""

from datetime import datetime as dt

import pytest

from dagster_sparkmesh.snapshot.records import Interval


SCD_BY_TIME = {"name": "SCD_TYPE_2_BY_TIME", "unique_key": ("id",)}


def days(first: int, last: int) -> tuple[Interval, ...]:
    return tuple(Interval(start=dt(2024, 1, d), end=dt(2024, 1, d + 1)) for d in range(first, last + 1))


def _models(model, kind=SCD_BY_TIME):
    return [
        model("s.raw", "SELECT id, ds, updated_at FROM src.e", ["src.e"]),
        model("s.dim", "SELECT id, updated_at FROM s.raw", ["s.raw"], kind=kind),
    ]


def test_time_passing_asks_only_for_the_new_interval_not_a_rebuild(world, model):
    world.apply(*_models(model))
    plan = world.plan(*_models(model), execution_time=dt(2024, 1, 11, 0, 5))
    assert plan.missing_intervals["s.dim"] == days(10, 10)


def test_restating_an_upstream_model_restates_the_whole_history_table_where_the_kind_allows_it(world, model):
    restated = {**SCD_BY_TIME, "disable_restatement": False}
    world.apply(*_models(model, restated))
    plan = world.plan(*_models(model, restated), restate_models=["s.raw"], start="2024-01-08")
    assert plan.restatements["s.raw"] == Interval(start=dt(2024, 1, 8), end=dt(2024, 1, 10))
    assert plan.restatements["s.dim"] == Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))
    # Restated in full, in this plan: the merge runs once over everything it had recorded, not over the window only.
    assert plan.missing_intervals["s.dim"] == days(1, 9)


@pytest.mark.parametrize("kind", [SCD_BY_TIME, {**SCD_BY_TIME, "disable_restatement": True}], ids=["default", "written"])
def test_the_history_is_kept_by_default_and_with_disable_restatement(world, model, kind):
    models = _models(model, kind)
    world.apply(*models)
    plan = world.plan(*models, restate_models=["s.raw"])
    assert "s.dim" not in plan.restatements
    assert any("s.dim" in note and "disable_restatement" in note for note in plan.notes)
