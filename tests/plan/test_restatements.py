"""Restatements flow down the DAG: lookback readers, whole tables, shared tables in dev, --effective-from."""

from datetime import datetime as dt


from dagster_sparkmesh.snapshot.records import Interval


UNIQUE = {"name": "INCREMENTAL_BY_UNIQUE_KEY", "unique_key": ("id",)}
LOOKBACK = {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds", "lookback": 2}


def days(first: int, last: int) -> tuple[Interval, ...]:
    return tuple(Interval(start=dt(2024, 1, d), end=dt(2024, 1, d + 1)) for d in range(first, last + 1))


def _models(model):
    return [
        model("s.events", "SELECT id, ds FROM src.e", ["src.e"]),
        model("s.rolling", "SELECT id, ds FROM s.events", ["s.events"], kind=LOOKBACK),
        model("s.after", "SELECT id, ds FROM s.rolling", ["s.rolling"]),
        model("s.latest", "SELECT id, MAX(ds) AS ds FROM s.events GROUP BY id", ["s.events"], kind=UNIQUE),
    ]


def test_a_lookback_reader_restates_the_days_that_read_the_restated_ones(world, model):
    world.apply(*_models(model), end="2024-01-10")
    plan = world.plan(*_models(model), restate_models=["s.events"], start="2024-01-03", end="2024-01-05")
    assert plan.restatements["s.events"] == Interval(start=dt(2024, 1, 3), end=dt(2024, 1, 5))
    # 01-05 and 01-06 of s.rolling read 01-03 and 01-04 through its lookback; its reader follows it.
    assert plan.restatements["s.rolling"] == Interval(start=dt(2024, 1, 3), end=dt(2024, 1, 7))
    assert plan.restatements["s.after"] == Interval(start=dt(2024, 1, 3), end=dt(2024, 1, 7))
    assert plan.missing_intervals["s.after"] == days(3, 6)
    assert set(plan.missing_intervals["s.rolling"]) >= set(days(3, 6))


def test_a_unique_key_reader_is_restated_and_recomputed_whole_in_the_same_plan(world, model):
    world.apply(*_models(model), end="2024-01-10")
    plan = world.plan(*_models(model), restate_models=["s.events"], start="2024-01-03", end="2024-01-04")
    assert plan.restatements["s.latest"] == Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))
    assert plan.missing_intervals["s.latest"] == days(1, 9)


def test_dev_never_restates_the_tables_prod_reads(world, model):
    world.apply(*_models(model), end="2024-01-10")
    plan = world.plan(*_models(model), environment="dev", restate_models=["s.events"], end="2024-01-10")
    assert plan.restatements == {}
    assert "s.events not restated: its table is the one prod reads (restate it in prod)" in plan.notes


def test_effective_from_restates_the_readers_of_forward_only_models(world, model):
    summary = model("s.summary", "SELECT COUNT(*) AS n FROM s.events", ["s.events"], kind={"name": "FULL"})
    world.apply(*_models(model), summary, end="2024-01-10")
    changed = model("s.events", "SELECT id, ds, 1 AS one FROM src.e", ["src.e"])
    models = [changed, *_models(model)[1:], summary]
    plan = world.plan(*models, forward_only=True, effective_from="2024-01-05", end="2024-01-10")
    assert plan.restatements["s.events"] == Interval(start=dt(2024, 1, 5), end=dt(2024, 1, 10))
    assert plan.restatements["s.summary"] == Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))
    assert plan.missing_intervals["s.summary"] == days(1, 9)


def test_restate_within_keeps_the_plan_window_and_restates_only_that_range(world, model):
    """A Dagster run's partitions: the plan keeps its whole window (what it promotes), the restatement is the run's."""
    world.apply(*_models(model), end="2024-01-10")
    plan = world.plan(*_models(model), restate_models=["s.events"],
                      restate_within=Interval(start=dt(2024, 1, 4), end=dt(2024, 1, 5)))
    assert plan.restatements["s.events"] == Interval(start=dt(2024, 1, 4), end=dt(2024, 1, 5))
    assert plan.restatements["s.rolling"] == Interval(start=dt(2024, 1, 4), end=dt(2024, 1, 7))
    assert plan.missing_intervals["s.events"] == days(4, 4)
    assert plan.start == dt(2024, 1, 1)
