from datetime import datetime as dt

import pytest

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.plan.versions import new_version
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.snapshot.records import ChangeCategory, Interval

C = ChangeCategory
TIME_RANGE = {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds"}
WITH_NAME = "SELECT id, ds, name FROM src.events"


def days(first: int, last: int) -> tuple[Interval, ...]:
    """Daily unit intervals of January 2024, ``first`` to ``last`` inclusive."""
    return tuple(Interval(start=dt(2024, 1, d), end=dt(2024, 1, d + 1)) for d in range(first, last + 1))


@pytest.fixture
def shop(model):
    """raw → orders → revenue; three incremental daily models starting 2024-01-01."""

    def build(raw="SELECT id, ds FROM src.events", orders="SELECT id, ds FROM s.raw", fields=None):
        fields = fields or {}
        return [
            model("s.raw", raw, ["src.events"], **fields.get("raw", {})),
            model("s.orders", orders, ["s.raw"], **fields.get("orders", {})),
            model("s.revenue", "SELECT COUNT(*) AS n, ds FROM s.orders GROUP BY ds", ["s.orders"], **fields.get("revenue", {})),
        ]

    return build


def test_first_plan_adds_everything_and_backfills_complete_days(world, shop):
    plan = world.plan(*shop())
    assert plan.added == ("s.raw", "s.orders", "s.revenue")
    assert plan.is_new_environment and plan.previous_plan_id is None and plan.has_changes
    assert {s.change_category for s in plan.new_snapshots} == {C.BREAKING}
    # Execution time is 2024-01-10 06:30: the 10th is incomplete.
    assert plan.missing_intervals == {name: days(1, 9) for name in plan.added}
    after = plan.environment_after
    assert [s.name for s in after.snapshots] == list(plan.added)
    assert after.plan_id == plan.plan_id and after.expires_at is None
    assert {s.version for s in plan.new_snapshots} == {s.version for s in after.snapshots}


def test_unchanged_project_is_a_noop(world, shop):
    first = world.apply(*shop())
    plan = world.plan(*shop())
    assert not plan.has_changes and plan.is_noop
    assert plan.previous_plan_id == first.plan_id
    assert plan.new_snapshots == () and plan.missing_intervals == {}
    assert plan.environment_after.snapshots == first.environment_after.snapshots


def test_time_passing_asks_for_the_new_interval_only(world, shop):
    world.apply(*shop())
    plan = world.plan(*shop(), execution_time=dt(2024, 1, 11, 0, 5))
    assert not plan.has_changes and not plan.is_noop
    assert plan.missing_intervals == {name: days(10, 10) for name in ("s.raw", "s.orders", "s.revenue")}


def test_non_breaking_change_rebuilds_the_model_but_not_its_children(world, shop):
    before = world.apply(*shop())
    plan = world.plan(*shop(orders="SELECT id, ds, id * 2 AS double_id FROM s.raw"))
    assert plan.directly_modified == ("s.orders",) and plan.indirectly_modified == ("s.revenue",)
    change = plan.direct_changes["s.orders"]
    assert change.category is C.NON_BREAKING
    assert "+" in change.diff and "double_id" in change.diff
    assert plan.categories["s.revenue"] is C.INDIRECT_NON_BREAKING
    assert plan.version_of("s.revenue") == before.version_of("s.revenue")
    assert plan.version_of("s.orders") != before.version_of("s.orders")
    assert plan.missing_intervals == {"s.orders": days(1, 9)}


def test_breaking_change_cascades_to_every_descendant(world, shop):
    before = world.apply(*shop())
    plan = world.plan(*shop(raw="SELECT id, ds FROM src.events WHERE id > 0"))
    assert plan.directly_modified == ("s.raw",)
    assert plan.indirectly_modified == ("s.orders", "s.revenue")
    assert plan.categories == {"s.raw": C.BREAKING, "s.orders": C.INDIRECT_BREAKING, "s.revenue": C.INDIRECT_BREAKING}
    assert all(plan.version_of(n) != before.version_of(n) for n in ("s.raw", "s.orders", "s.revenue"))
    assert set(plan.missing_intervals) == {"s.raw", "s.orders", "s.revenue"}


def test_one_breaking_parent_breaks_a_diamond_child(world, model):
    def diamond(left="SELECT id, ds FROM src.e", right="SELECT id, ds FROM src.e"):
        return [
            model("s.left", left, ["src.e"]),
            model("s.right", right, ["src.e"]),
            model("s.both", "SELECT l.id, l.ds FROM s.left AS l JOIN s.right AS r ON l.id = r.id", ["s.left", "s.right"]),
        ]

    world.apply(*diamond())
    plan = world.plan(*diamond(left="SELECT id, ds, 1 AS one FROM src.e", right="SELECT id, ds FROM src.e WHERE id > 1"))
    assert plan.categories == {"s.left": C.NON_BREAKING, "s.right": C.BREAKING, "s.both": C.INDIRECT_BREAKING}


def test_dev_reuses_prod_tables_and_promoting_to_prod_recomputes_nothing(world, shop):
    prod = world.apply(*shop())
    changed = shop(orders="SELECT id, ds FROM s.raw WHERE id > 10")
    dev = world.apply(*changed, environment="dev")
    assert dev.is_new_environment and dev.base_environment == "prod"
    assert dev.added == () and dev.directly_modified == ("s.orders",)
    assert dev.version_of("s.raw") == prod.version_of("s.raw")
    assert set(dev.missing_intervals) == {"s.orders", "s.revenue"}
    assert dev.environment_after.expires_at == dt(2024, 1, 17, 6, 30)  # environment_ttl: in 1 week
    assert world.state.get_environment("prod").plan_id == prod.plan_id  # dev never touches prod

    to_prod = world.plan(*changed)
    assert to_prod.directly_modified == ("s.orders",) and to_prod.indirectly_modified == ("s.revenue",)
    assert to_prod.new_snapshots == () and to_prod.missing_intervals == {}
    assert to_prod.categories == {"s.orders": C.BREAKING, "s.revenue": C.INDIRECT_BREAKING}
    assert to_prod.previous_plan_id == prod.plan_id
    assert {s.version for s in to_prod.environment_after.snapshots} == {s.version for s in dev.environment_after.snapshots}


def test_reverting_in_dev_reuses_the_prod_snapshot(world, shop):
    world.apply(*shop())
    world.apply(*shop(orders="SELECT id, ds FROM s.raw WHERE id > 10"), environment="dev")
    revert = world.plan(*shop(), environment="dev")
    assert revert.directly_modified == ("s.orders",) and revert.new_snapshots == ()
    assert revert.missing_intervals == {}


def test_metadata_only_change_keeps_fingerprint_and_version(world, shop):
    before = world.apply(*shop())
    plan = world.plan(*shop(fields={"revenue": {"owner": "finance", "description": "daily revenue"}}))
    assert plan.metadata_only == ("s.revenue",) and plan.directly_modified == () and plan.has_changes
    (snapshot,) = plan.new_snapshots
    old = next(s for s in before.new_snapshots if s.name == "s.revenue")
    assert (snapshot.fingerprint, snapshot.version) == (old.fingerprint, old.version)
    assert snapshot.metadata_hash != old.metadata_hash and snapshot.change_category is C.METADATA
    assert plan.missing_intervals == {}


def test_removed_model(world, shop):
    world.apply(*shop())
    plan = world.plan(*shop()[:2])
    assert plan.removed == ("s.revenue",) and plan.has_changes
    assert [s.name for s in plan.environment_after.snapshots] == ["s.raw", "s.orders"]


def test_forward_only_plan_reuses_versions_and_computes_nothing_past(world, shop):
    before = world.apply(*shop())
    plan = world.plan(*shop(raw="SELECT id, ds FROM src.events WHERE id > 0"), forward_only=True)
    assert plan.categories == {"s.raw": C.FORWARD_ONLY, "s.orders": C.FORWARD_ONLY, "s.revenue": C.FORWARD_ONLY}
    assert all(plan.version_of(n) == before.version_of(n) for n in ("s.raw", "s.orders", "s.revenue"))
    assert plan.missing_intervals == {}


def test_forward_only_kind_with_a_breaking_parent(world, shop):
    forward = {"kind": {**TIME_RANGE, "forward_only": True}}
    before = world.apply(*shop(fields={"revenue": forward}))
    plan = world.plan(*shop(raw="SELECT id, ds FROM src.events WHERE id > 0", fields={"revenue": forward}))
    assert plan.categories["s.orders"] is C.INDIRECT_BREAKING
    assert plan.categories["s.revenue"] is C.FORWARD_ONLY
    assert plan.version_of("s.revenue") == before.version_of("s.revenue")


def test_forward_only_destructive_change_is_refused(world, shop):
    forward = {"kind": {**TIME_RANGE, "forward_only": True}}
    world.apply(*shop(raw=WITH_NAME, orders="SELECT id, ds, name FROM s.raw", fields={"orders": forward}))
    with pytest.raises(PlanError, match="destructive: drops column name") as error:
        world.plan(*shop(raw=WITH_NAME, orders="SELECT id, ds FROM s.raw", fields={"orders": forward}))
    assert error.value.path.name == "s.orders.sql" and "on_destructive_change" in error.value.hint


@pytest.mark.parametrize("policy, warned", [("warn", True), ("allow", False)])
def test_forward_only_destructive_change_allowed_by_kind(world, shop, policy, warned):
    forward = {"kind": {**TIME_RANGE, "forward_only": True, "on_destructive_change": policy}}
    world.apply(*shop(raw=WITH_NAME, orders="SELECT id, ds, name FROM s.raw", fields={"orders": forward}))
    plan = world.plan(*shop(raw=WITH_NAME, orders="SELECT id, ds FROM s.raw", fields={"orders": forward}))
    assert plan.categories["s.orders"] is C.FORWARD_ONLY
    assert plan.direct_changes["s.orders"].destructive[0].name == "name"
    assert bool(plan.warnings) is warned


def test_forward_only_in_dev_is_previewed_over_the_last_day_only(world, shop):
    prod = world.apply(*shop())
    plan = world.plan(*shop(orders="SELECT id, ds FROM s.raw WHERE id > 0"), environment="dev", forward_only=True,
                      execution_time=dt(2024, 1, 12))
    # The unchanged parent catches up on its shared table; the changed model and its child compute one day each,
    # into preview tables (plan/test_previews.py covers the rules).
    assert plan.missing_intervals == {"s.raw": days(10, 11), "s.orders": days(11, 11), "s.revenue": days(11, 11)}
    assert set(plan.previews) == {"s.orders", "s.revenue"}
    assert plan.version_of("s.orders") != prod.version_of("s.orders")


def test_restatement_cascades_downstream(world, shop):
    world.apply(*shop())
    plan = world.plan(*shop(), restate_models=["s.orders"], start="2024-01-03", end="2024-01-05")
    window = Interval(start=dt(2024, 1, 3), end=dt(2024, 1, 5))
    assert plan.restatements == {"s.orders": window, "s.revenue": window}
    assert plan.missing_intervals == {"s.orders": days(3, 4), "s.revenue": days(3, 4)}
    assert not plan.has_changes and not plan.is_noop


def test_restatement_skips_disabled_and_restates_whole_full_models(world, model):
    def models():
        return [
            model("s.raw", "SELECT id, ds FROM src.e", ["src.e"]),
            model("s.kept", "SELECT id, ds FROM s.raw", ["s.raw"], kind={**TIME_RANGE, "disable_restatement": True}),
            model("s.full", "SELECT COUNT(*) AS n FROM s.raw", ["s.raw"], kind={"name": "FULL"}),
        ]

    world.apply(*models())
    plan = world.plan(*models(), restate_models=["s.raw"], start="2024-01-08")
    assert set(plan.restatements) == {"s.raw", "s.full"}
    assert plan.restatements["s.full"] == Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))
    assert plan.missing_intervals == {"s.raw": days(8, 9), "s.full": days(1, 9)}
    assert any("s.kept" in note and "disable_restatement" in note for note in plan.notes)


def test_unknown_restatement_is_a_plan_error(world, shop):
    with pytest.raises(PlanError, match="unknown model 's.nope'"):
        world.plan(*shop(), restate_models=["s.nope"])


def test_lookback_recomputes_previous_intervals(world, model):
    def models():
        return [model("s.late", "SELECT id, ds FROM src.e", ["src.e"], kind={**TIME_RANGE, "lookback": 2})]

    world.apply(*models())
    plan = world.plan(*models(), execution_time=dt(2024, 1, 11, 1))
    assert plan.missing_intervals == {"s.late": days(8, 10)}


def test_embedded_models_have_snapshots_but_no_intervals(world, model):
    plan = world.plan(
        model("s.emb", "SELECT id, ds FROM src.e", ["src.e"], kind={"name": "EMBEDDED"}),
        model("s.use", "SELECT id, ds FROM s.emb", ["s.emb"]),
    )
    assert [s.kind_name for s in plan.environment_after.snapshots] == ["EMBEDDED", "INCREMENTAL_BY_TIME_RANGE"]
    assert set(plan.missing_intervals) == {"s.use"}


def test_model_start_end_and_plan_window(world, model):
    plan = world.plan(
        model("s.a", "SELECT ds FROM src.e", ["src.e"], start="2024-01-05", end="2024-01-06"),
        model("s.b", "SELECT ds FROM src.e", ["src.e"], start="2024-01-03"),
        start="2024-01-04",
    )
    assert plan.start == dt(2024, 1, 4) and plan.end == dt(2024, 1, 10, 6, 30)
    assert plan.missing_intervals == {"s.a": days(5, 6), "s.b": days(4, 9)}


def test_a_model_without_start_starts_with_the_earliest_model_as_in_sqlmesh(world, model):
    plan = world.plan(
        model("s.a", "SELECT ds FROM src.e", ["src.e"], start="2024-01-05"),
        model("s.v", "SELECT ds FROM s.a", ["s.a"], start=None, kind={"name": "VIEW"}),
        model("s.i", "SELECT ds FROM s.a", ["s.a"], start=None),
    )
    assert plan.missing_intervals["s.i"] == days(5, 9)
    assert plan.missing_intervals["s.v"][0].start == dt(2024, 1, 5)
    alone = world.plan(model("s.i", "SELECT ds FROM src.e", ["src.e"], start=None))
    assert alone.missing_intervals == {"s.i": days(9, 9)}  # no model has a start: from the day before


def test_moving_start_or_end_is_metadata_as_in_sqlmesh_and_the_plan_says_so(world, model):
    first = world.apply(model("s.a", "SELECT ds FROM src.e", ["src.e"], start="2024-01-01"))
    moved = world.plan(model("s.a", "SELECT ds FROM src.e", ["src.e"], start="2024-01-05", end="2024-01-07"))
    assert moved.metadata_only == ("s.a",) and moved.missing_intervals == {}
    assert moved.environment_after.snapshots[0].version == first.environment_after.snapshots[0].version
    [note] = [n for n in moved.notes if "start/end moved" in n]
    assert "2024-01-01 .. - -> 2024-01-05 .. 2024-01-07" in note and "--restate-model" in note
    assert not [n for n in world.plan(model("s.a", "SELECT ds FROM src.e", ["src.e"])).notes if "moved" in n]


def test_bad_window_and_bad_model_start_are_plan_errors(world, model):
    good = model("s.a", "SELECT ds FROM src.e", ["src.e"])
    with pytest.raises(PlanError, match="cannot read"):
        world.plan(good, start="the other day")
    with pytest.raises(PlanError, match="starts at"):
        world.plan(good, start="2024-01-05", end="2024-01-02")
    with pytest.raises(PlanError) as error:
        world.plan(model("s.b", "SELECT ds FROM src.e", ["src.e"], start="soon"))
    assert error.value.path.name == "s.b.sql"


def test_versions_are_unique_per_model_and_valid_table_names():
    assert new_version("s.a", "f" * 64) != new_version("s.b", "f" * 64)
    assert physical_table("s.a", new_version("s.a", "0" * 64)).startswith("sparkmesh__s.s__a__v")


def test_plan_round_trips_through_json(world, shop):
    from dagster_sparkmesh.plan.definition import Plan

    world.apply(*shop())
    plan = world.plan(*shop(orders="SELECT id, ds, 1 AS one FROM s.raw"), restate_models=["s.raw"])
    assert Plan.model_validate_json(plan.model_dump_json()) == plan


def test_a_forward_only_change_cannot_move_a_models_table_to_another_catalog(world, model):
    """The catalog is where a version's table is: a forward-only change keeps the version, so it cannot move it."""
    forward = {"kind": {**TIME_RANGE, "forward_only": True}}
    world.apply(model("lake.s.raw", "SELECT id, ds FROM src.events", ["src.events"], **forward))

    with pytest.raises(PlanError, match="cannot move the model's table to another catalog") as error:
        world.plan(model("lake.s.raw", "SELECT id, ds FROM src.events", ["src.events"], catalog="lake", **forward))
    assert "without --forward-only" in (error.value.hint or "")
    moved = world.plan(model("lake.s.raw", "SELECT id, ds FROM src.events", ["src.events"], catalog="lake",
                             kind={**TIME_RANGE}))
    assert moved.physical_table_of("lake.s.raw").startswith("lake.sparkmesh__s.s__raw__")
    assert moved.missing_intervals["lake.s.raw"]  # a new table, built in the catalog
