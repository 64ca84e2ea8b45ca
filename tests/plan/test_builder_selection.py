"""``build_plan(selected=...)`` and ``build_plan(effective_from=...)``, over states the real executor applied."""

from datetime import datetime as dt

import pytest

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.snapshot.records import Interval


def _models(model, a="SELECT id, ds FROM src.events", b="SELECT id, ds FROM src.events", extra=False):
    models = [model("s.a", a, ["src.events"]), model("s.b", b, ["src.events"])]
    if extra:
        models.append(model("s.c", "SELECT id, ds FROM s.a", ["s.a"]))
    return models


def test_only_selected_changes_are_planned(world, model):
    first = world.apply(*_models(model))
    edited = _models(model, a="SELECT id + 1 AS id, ds FROM src.events", b="SELECT id + 2 AS id, ds FROM src.events")

    plan = world.plan(*edited, selected=["s.a"])

    assert plan.directly_modified == ("s.a",)
    assert plan.version_of("s.a") != first.version_of("s.a")
    assert plan.version_of("s.b") == first.version_of("s.b")  # kept: the environment's current snapshot
    assert [s.name for s in plan.new_snapshots] == ["s.a"]
    assert set(plan.missing_intervals) == {"s.a"}


def test_unselected_additions_and_removals_are_left_alone(world, model):
    first = world.apply(*_models(model))
    plan = world.plan(model("s.a", "SELECT id, ds FROM src.events", ["src.events"]),
                      model("s.new", "SELECT 1 AS id, ds FROM src.events", ["src.events"]), selected=["s.a"])

    assert plan.added == () and plan.removed == ()
    assert plan.environment_after.snapshot_for("s.b").version == first.version_of("s.b")
    assert plan.environment_after.snapshot_for("s.new") is None
    assert not plan.has_changes


def test_selecting_everything_equals_no_selection(world, model):
    world.apply(*_models(model))
    edited = _models(model, a="SELECT id + 1 AS id, ds FROM src.events", extra=True)
    full, selected = world.plan(*edited), world.plan(*edited, selected=["s.a", "s.b", "s.c"])
    assert (full.added, full.directly_modified) == (selected.added, selected.directly_modified)
    assert full.environment_after.snapshots == selected.environment_after.snapshots


def test_effective_from_restates_forward_only_models_in_prod(world, model):
    world.apply(*_models(model))
    edited = _models(model, a="SELECT id + 1 AS id, ds FROM src.events")

    plan = world.plan(*edited, forward_only=True, effective_from="2024-01-05")

    assert plan.restatements == {"s.a": Interval(start=dt(2024, 1, 5), end=dt(2024, 1, 10, 6, 30))}
    assert [(i.start.day, i.end.day) for i in plan.missing_intervals["s.a"]] == [(5, 6), (6, 7), (7, 8), (8, 9), (9, 10)]
    assert plan.effective_from == dt(2024, 1, 5)


def test_effective_from_in_dev_never_touches_the_shared_table(world, model):
    prod = world.apply(*_models(model))
    edited = _models(model, a="SELECT id + 1 AS id, ds FROM src.events")
    plan = world.plan(*edited, environment="dev", forward_only=True, effective_from="2024-01-05")
    # Nothing restated; only the preview table is computed (the last day), never the shared one.
    assert plan.restatements == {}
    assert list(plan.missing_intervals["s.a"]) == [Interval(start=dt(2024, 1, 9), end=dt(2024, 1, 10))]
    assert "s.a" in plan.previews and plan.version_of("s.a") != prod.version_of("s.a")


def test_effective_from_without_forward_only_changes_is_an_error(world, model):
    world.apply(*_models(model))
    edited = _models(model, a="SELECT id + 1 AS id, ds FROM src.events")
    with pytest.raises(PlanError, match="forward-only") as error:
        world.plan(*edited, effective_from="2024-01-05")
    assert error.value.snippet == "--effective-from 2024-01-05" and error.value.hint
