"""Which models a development environment has views of (``plan.include_unmodified``, SQLMesh's rule)."""

from __future__ import annotations

import pytest


@pytest.fixture
def shop(model):
    """raw → orders → revenue, and refunds beside them (raw → refunds)."""

    def build(orders: str = "SELECT id, ds FROM s.raw", refunds: str = "SELECT id, ds FROM s.raw"):
        return [
            model("s.raw", "SELECT id, ds FROM src.events", ["src.events"]),
            model("s.orders", orders, ["s.raw"]),
            model("s.revenue", "SELECT COUNT(*) AS n, ds FROM s.orders GROUP BY ds", ["s.orders"]),
            model("s.refunds", refunds, ["s.raw"]),
        ]

    return build


def promoted(plan) -> set[str]:
    return {s.name for s in plan.environment_after.snapshots if s.promoted}


def test_a_new_dev_environment_has_views_of_the_changed_models_and_records_every_snapshot(world, shop):
    world.apply(*shop())
    dev = world.apply(*shop(orders="SELECT id, ds FROM s.raw WHERE id > 10"), environment="dev")
    assert promoted(dev) == {"s.orders", "s.revenue"}  # the change and its (indirectly modified) child
    assert {s.name for s in dev.environment_after.snapshots} == {"s.raw", "s.orders", "s.revenue", "s.refunds"}


def test_a_later_dev_plan_keeps_the_earlier_views_and_adds_the_new_changes(world, shop):
    world.apply(*shop())
    world.apply(*shop(orders="SELECT id, ds FROM s.raw WHERE id > 10"), environment="dev")
    both = world.apply(*shop(orders="SELECT id, ds FROM s.raw WHERE id > 10", refunds="SELECT id, ds FROM s.raw WHERE id < 5"),
                       environment="dev")
    assert promoted(both) == {"s.orders", "s.revenue", "s.refunds"}
    reverted = world.apply(*shop(), environment="dev")  # changed back: the views stay, on prod's versions
    assert promoted(reverted) == {"s.orders", "s.revenue", "s.refunds"}
    prod = world.state.get_environment("prod")
    assert {s.name: s.version for s in reverted.environment_after.snapshots} == {s.name: s.version for s in prod.snapshots}


def test_prod_and_include_unmodified_have_views_of_every_model(world, shop):
    prod = world.apply(*shop())
    assert promoted(prod) == {"s.raw", "s.orders", "s.revenue", "s.refunds"}
    dev = world.plan(*shop(orders="SELECT id, ds FROM s.raw WHERE id > 10"), environment="dev", include_unmodified=True)
    assert promoted(dev) == {"s.raw", "s.orders", "s.revenue", "s.refunds"}
    to_prod = world.plan(*shop(orders="SELECT id, ds FROM s.raw WHERE id > 10"), include_unmodified=False)
    assert promoted(to_prod) == {"s.raw", "s.orders", "s.revenue", "s.refunds"}


def test_an_unchanged_new_dev_environment_has_no_views(world, shop):
    world.apply(*shop())
    assert promoted(world.plan(*shop(), environment="dev")) == set()
