from datetime import datetime as dt

import pytest

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.plan.explain import format_plan


def models(model, orders="SELECT id, ds FROM s.raw"):
    return [model("s.raw", "SELECT id, ds FROM src.e", ["src.e"]), model("s.orders", orders, ["s.raw"])]


def test_no_changes_message(world, model):
    world.apply(*models(model))
    text = format_plan(world.plan(*models(model)))
    assert "No changes to plan: project files match the `prod` environment" in text
    assert "Missing intervals" not in text


def test_first_plan_lists_added_models_and_missing_ranges(world, model):
    text = format_plan(world.plan(*models(model)))
    assert "(new, from `prod`)" not in text  # prod is not created from anything
    assert "Added:\n    └── s.raw\n    └── s.orders" in text
    assert "s.raw: [2024-01-01, 2024-01-10) (9 intervals)" in text


def test_direct_change_shows_category_and_readable_diff(world, model):
    world.apply(*models(model))
    text = format_plan(world.plan(*models(model, "SELECT id, ds, id + 1 AS next_id FROM s.raw"), environment="dev"))
    assert "Plan " in text and "for environment `dev` (new, from `prod`)" in text
    assert "Directly modified:\n    └── s.orders (non-breaking)" in text
    # Pretty-printed SQL: the added projection is one added line of the diff.
    assert "+  id + 1 AS next_id" in text
    assert "-  ds\n" in text and "+  ds," in text
    assert "s.orders: [2024-01-01, 2024-01-10) (9 intervals)" in text


def test_indirect_changes_and_restatements(world, model):
    world.apply(*models(model))
    plan = world.plan(*models(model), restate_models=["s.raw"], start="2024-01-08", execution_time=dt(2024, 1, 10, 3))
    text = format_plan(plan)
    assert "Restatements:\n    └── s.raw: [2024-01-08, 2024-01-10)\n    └── s.orders: [2024-01-08, 2024-01-10)" in text

    changed = world.plan(model("s.raw", "SELECT id, ds FROM src.e WHERE id > 0", ["src.e"]), models(model)[1])
    assert "Indirectly modified:\n    └── s.orders (indirect-breaking)" in format_plan(changed)


def test_invalid_model_cron_points_at_the_model(world, model):
    with pytest.raises(PlanError, match="invalid cron") as error:
        world.plan(model("s.raw", "SELECT id, ds FROM src.e", ["src.e"], cron="@fortnightly"))
    assert error.value.path.name == "s.raw.sql"
