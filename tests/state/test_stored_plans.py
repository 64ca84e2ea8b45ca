"""Stored plans: kept whole (compressed) under their id, prepared exactly once, forgotten by age unless promoted."""

from __future__ import annotations

from datetime import datetime, timedelta

from dagster_sparkmesh.plan.rollback import rollback_plan
from dagster_sparkmesh.plan.stored import decode, encode, load_plan, store_plan
from dagster_sparkmesh.snapshot.records import Environment, EnvironmentSnapshot, Interval, SnapshotId
from tests.state.test_snapshots import snapshot

DAY = datetime(2024, 1, 1)


def _plan():
    daily = EnvironmentSnapshot(name="shop.daily", fingerprint="f1", version="v1", kind_name="FULL")
    previous = Environment(name="prod", plan_id="old", snapshots=(daily,), start=DAY, promoted_at=DAY)
    return rollback_plan(previous.model_copy(update={"plan_id": "cur"}), previous, now=DAY, ttl=None)


def test_a_plan_comes_back_equal_and_a_second_store_keeps_the_first(state_store):
    plan = _plan()
    assert decode(encode(plan)) == plan
    assert store_plan(state_store, plan) == plan
    other = plan.model_copy(update={"environment": "elsewhere"})
    assert store_plan(state_store, other) == plan  # same id: the stored one wins
    assert load_plan(state_store, plan.plan_id) == plan


def test_a_plan_is_prepared_once_even_by_two_stores(state_location):
    first, second = state_location.open(), state_location.open()
    try:
        first.save_plan("p1", "prod", "{}")
        first.add_intervals("m.a", "v1", [Interval(start=DAY, end=DAY + timedelta(days=3))])
        restated = [("m.a", "v1", Interval(start=DAY, end=DAY + timedelta(days=1)))]
        assert first.prepare_plan("p1", [snapshot("m.a", "f1")], restated)
        recomputed = Interval(start=DAY, end=DAY + timedelta(days=1))
        first.add_intervals("m.a", "v1", [recomputed])  # a step recomputed the restated day
        assert not second.prepare_plan("p1", [snapshot("m.a", "f1")], restated)  # would forget it again
        assert second.get_intervals("m.a", "v1") == [Interval(start=DAY, end=DAY + timedelta(days=3))]
        assert SnapshotId(name="m.a", fingerprint="f1") in second.get_snapshots([SnapshotId(name="m.a", fingerprint="f1")])
        assert second.get_plan("p1").prepared_at is not None
    finally:
        first.close()
        second.close()


def test_old_plans_are_forgotten_unless_an_environment_was_promoted_with_them(state_location):
    now = [DAY]
    store = state_location.open(clock=lambda: now[0])
    try:
        store.save_plan("promoted", "prod", "{}")
        store.save_plan("applied_and_replaced", "prod", "{}")
        now[0] = DAY + timedelta(days=10)
        store.save_plan("recent", "prod", "{}")
        deleted = store.delete_plans(DAY + timedelta(days=5), keep=["promoted"])
        assert deleted == 1
        assert [store.get_plan(p) is not None for p in ("promoted", "applied_and_replaced", "recent")] == [
            True, False, True
        ]
        assert store.latest_plan("prod").plan_id == "recent"
    finally:
        store.close()
