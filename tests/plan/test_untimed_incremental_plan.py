"""INCREMENTAL_BY_PARTITION and INCREMENTAL_UNMANAGED in plans: forward-only, restated whole or not at all."""

from datetime import datetime as dt

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.snapshot.records import ChangeCategory, Interval

BY_PARTITION = {"name": "INCREMENTAL_BY_PARTITION"}
UNMANAGED = {"name": "INCREMENTAL_UNMANAGED"}
RESTATABLE_UNMANAGED = {"name": "INCREMENTAL_UNMANAGED", "disable_restatement": False}


def _models(model, unmanaged=UNMANAGED):
    return [
        model("s.events", "SELECT id, region, ds FROM src.e", ["src.e"]),
        model("s.by_region", "SELECT region, COUNT(*) AS n FROM s.events GROUP BY region", ["s.events"],
              kind=BY_PARTITION, partitioned_by=("region",)),
        model("s.log", "SELECT id, ds FROM s.events", ["s.events"], kind=unmanaged),
    ]  # fmt: skip


def test_each_run_computes_only_the_missing_intervals(world, model):
    world.apply(*_models(model), end="2024-01-05")
    plan = world.plan(*_models(model), end="2024-01-07")
    missing = {name: [i.start.day for i in plan.missing_intervals[name]] for name in ("s.by_region", "s.log")}
    assert missing == {"s.by_region": [5, 6], "s.log": [5, 6]}


def test_a_by_partition_model_is_restated_whole_and_an_unmanaged_one_not_at_all(world, model):
    world.apply(*_models(model), end="2024-01-10")
    plan = world.plan(*_models(model), restate_models=["s.events"], start="2024-01-05", end="2024-01-10")
    assert plan.restatements["s.by_region"] == Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))
    assert len(plan.missing_intervals["s.by_region"]) == 9
    assert "s.log" not in plan.restatements and "s.log" not in plan.missing_intervals
    assert "s.log not restated: disable_restatement (its kind's, or its kind's default)" in plan.notes


def test_an_unmanaged_model_that_clears_disable_restatement_is_restated_whole(world, model):
    world.apply(*_models(model, RESTATABLE_UNMANAGED), end="2024-01-10")
    plan = world.plan(*_models(model, RESTATABLE_UNMANAGED), restate_models=["s.log"], start="2024-01-08")
    assert plan.restatements["s.log"] == Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))


def test_both_kinds_are_forward_only_as_in_sqlmesh(world, model):
    world.apply(*_models(model), end="2024-01-10")
    changed = [
        model("s.events", "SELECT id, region, ds FROM src.e", ["src.e"]),
        model("s.by_region", "SELECT region, COUNT(*) + 1 AS n FROM s.events GROUP BY region", ["s.events"],
              kind=BY_PARTITION, partitioned_by=("region",)),
        model("s.log", "SELECT id, ds, 1 AS one FROM s.events", ["s.events"], kind=UNMANAGED),
    ]  # fmt: skip
    plan = world.plan(*changed, end="2024-01-10")
    assert plan.categories == {"s.by_region": ChangeCategory.FORWARD_ONLY, "s.log": ChangeCategory.FORWARD_ONLY}
    assert plan.missing_intervals == {}  # the tables are kept: nothing is rebuilt


def test_a_by_partition_model_needs_partitioned_by(model):
    with pytest.raises(ProjectError, match="s.bad is INCREMENTAL_BY_PARTITION but has no partitioned_by") as caught:
        model("s.bad", "SELECT 1 AS a", kind=BY_PARTITION)
    assert caught.value.path is not None and caught.value.line == 1
