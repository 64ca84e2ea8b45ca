"""SQLMesh's ``allow_partials``: a model may compute the interval so far, up to its cron's last tick, and computes it
again whole once it is complete. SQLMesh 0.236.4 is the referee: on ``bench/partials_project`` at 13:20 of a day
(``bench/sqlmesh_spark ... --at``), both tools' rows agree (bench README, "Partial intervals")."""

from __future__ import annotations

from datetime import datetime as dt

from dagster_sparkmesh.snapshot.fingerprint import data_hash, metadata_hash
from dagster_sparkmesh.snapshot.records import Interval

HOURLY_DAYS = {
    "cron": "@hourly", "interval_unit": "day", "allow_partials": True, "start": "2024-01-08",
    "kind": {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "updated_at"},
}
"""Days refreshed every hour: the source's row of a day (at 12:00) is there from the 13:00 tick on."""


def _partial(start: dt, end: dt) -> Interval:
    return Interval(start=start, end=end)


def test_a_day_refreshed_each_hour_holds_its_rows_so_far_then_the_whole_day(world, model):
    days = model("s.days", "SELECT id, updated_at FROM src.events", ["src.events"], **HOURLY_DAYS)
    ids = "SELECT id FROM s.days ORDER BY id"

    morning = world.apply(days, execution_time=dt(2024, 1, 9, 11, 20))
    assert morning.missing_intervals == {"s.days": (
        Interval(start=dt(2024, 1, 8), end=dt(2024, 1, 9)), _partial(dt(2024, 1, 9), dt(2024, 1, 9, 11)),
    )}
    assert world.spark_rows(ids) == [(69,)]  # 2024-01-08's row; the 9th's arrives at 12:00
    version = morning.version_of("s.days")
    assert world.state.get_intervals("s.days", version) == [Interval(start=dt(2024, 1, 8), end=dt(2024, 1, 9, 11))]

    after_noon = world.apply(days, execution_time=dt(2024, 1, 9, 13, 20))
    assert after_noon.missing_intervals == {"s.days": (_partial(dt(2024, 1, 9), dt(2024, 1, 9, 13)),)}
    assert world.spark_rows(ids) == [(69,), (70,)]

    next_day = world.plan(days, execution_time=dt(2024, 1, 10, 0, 20))
    assert next_day.missing_intervals == {"s.days": (Interval(start=dt(2024, 1, 9), end=dt(2024, 1, 10)),)}


def test_a_partial_day_of_a_string_time_column_holds_the_days_rows(world, model):
    # The write compares a formatted column up to the interval's last microsecond (SQLMesh's BETWEEN): with
    # `< '2024-01-09'` the partial day [9 00:00, 9 11:00) matched no row, and its rows were dropped.
    texts = model("s.texts", "SELECT id, CAST(ds AS STRING) AS ds_text FROM src.events WHERE ds BETWEEN @start_ds AND @end_ds",
                  ["src.events"], **{**HOURLY_DAYS, "kind": {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds_text"}})
    world.apply(texts, execution_time=dt(2024, 1, 9, 11, 20))
    assert world.spark_rows("SELECT id, ds_text FROM s.texts ORDER BY id") == [(69, "2024-01-08"), (70, "2024-01-09")]


def test_a_cron_that_ticks_inside_its_day_computes_the_day_up_to_the_tick(world, model):
    at_0230 = model("s.at_0230", "SELECT id, ds FROM src.events", ["src.events"], cron="30 2 * * *",
                    allow_partials=True, start="2024-01-08")
    plan = world.plan(at_0230, execution_time=dt(2024, 1, 9, 6, 30))
    assert plan.missing_intervals == {"s.at_0230": (
        Interval(start=dt(2024, 1, 8), end=dt(2024, 1, 9)), _partial(dt(2024, 1, 9), dt(2024, 1, 9, 2, 30)),
    )}
    whole = world.plan(at_0230.model_copy(update={"allow_partials": False}), execution_time=dt(2024, 1, 9, 6, 30))
    assert whole.missing_intervals == {"s.at_0230": (Interval(start=dt(2024, 1, 8), end=dt(2024, 1, 9)),)}


def test_a_daily_cron_has_nothing_partial_to_compute(world, model):
    daily = model("s.daily", "SELECT id, ds FROM src.events", ["src.events"], allow_partials=True, start="2024-01-08")
    plan = world.plan(daily, execution_time=dt(2024, 1, 9, 13, 20))  # the cron's last tick is midnight
    assert plan.missing_intervals == {"s.daily": (Interval(start=dt(2024, 1, 8), end=dt(2024, 1, 9)),)}


def test_dagster_plans_whole_intervals_only(world, model):
    # A Dagster partition is a whole interval: its sensor, steps and promotions plan no partial one.
    days = model("s.days", "SELECT id, updated_at FROM src.events", ["src.events"], **HOURLY_DAYS)
    plan = world.plan(days, execution_time=dt(2024, 1, 9, 13, 20), partial_intervals=False)
    assert plan.missing_intervals == {"s.days": (Interval(start=dt(2024, 1, 8), end=dt(2024, 1, 9)),)}


def test_a_full_model_rebuilt_with_partials_records_its_time_so_far(world, model):
    full = model("s.full", "SELECT id, ds FROM src.events", ["src.events"], kind={"name": "FULL"},
                 cron="30 2 * * *", allow_partials=True, start="2024-01-08")
    plan = world.plan(full, execution_time=dt(2024, 1, 9, 6, 30))
    assert plan.missing_intervals["s.full"][-1] == _partial(dt(2024, 1, 9), dt(2024, 1, 9, 2, 30))


def test_allow_partials_is_metadata_as_in_sqlmesh(model):
    plain = model("s.m", "SELECT id, ds FROM src.events", ["src.events"])
    partial = plain.model_copy(update={"allow_partials": True})
    assert data_hash(plain) == data_hash(partial)  # no new table: only which intervals run changes
    assert metadata_hash(plain) != metadata_hash(partial)


def test_a_seed_with_allow_partials_has_nothing_partial_and_is_loaded_once(world, model):
    # model_defaults.allow_partials applies to seeds too: a seed's rows do not depend on time.
    seed = model("s.seed", "SELECT 1 AS x", [], kind={"name": "SEED", "path": "x.csv"}, allow_partials=True)
    for partial in (True, False):
        plan = world.plan(seed, execution_time=dt(2024, 1, 9, 11, 20, 37), partial_intervals=partial)
        assert all(i.end.time() == dt.min.time() for i in plan.missing_intervals["s.seed"])
    version = plan.version_of("s.seed")
    world.state.add_intervals("s.seed", version, list(plan.missing_intervals["s.seed"]))  # as its load records
    assert world.plan(seed, execution_time=dt(2024, 1, 9, 11, 21)).missing_intervals == {}


def test_a_start_after_the_crons_last_tick_computes_nothing_partial(world, model):
    at_0230 = model("s.at_0230", "SELECT id, ds FROM src.events", ["src.events"], cron="30 2 * * *",
                    allow_partials=True, start="2024-01-08")
    plan = world.plan(at_0230, start="2024-01-09 05:00", execution_time=dt(2024, 1, 9, 11, 20))
    assert plan.missing_intervals == {}


def test_a_restatement_restates_the_partial_interval_too(world, model):
    days = model("s.days", "SELECT id, updated_at FROM src.events", ["src.events"], **HOURLY_DAYS)
    world.apply(days, execution_time=dt(2024, 1, 9, 11, 20))
    plan = world.plan(days, restate_models=["s.days"], execution_time=dt(2024, 1, 9, 11, 40))
    assert plan.restatements["s.days"] == Interval(start=dt(2024, 1, 8), end=dt(2024, 1, 9, 11))
    assert plan.missing_intervals["s.days"][-1] == _partial(dt(2024, 1, 9), dt(2024, 1, 9, 11))


def test_a_lookback_reader_of_a_partial_parent_recomputes_only_behind_the_new_time(world, model):
    days = model("s.days", "SELECT id, updated_at FROM src.events", ["src.events"], **HOURLY_DAYS)
    hours = model("s.hours", "SELECT id, updated_at FROM s.days", ["s.days"], cron="@hourly", start="2024-01-09",
                  kind={"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "updated_at", "lookback": 2})
    world.apply(days, hours, execution_time=dt(2024, 1, 9, 11, 20))
    plan = world.plan(days, hours, execution_time=dt(2024, 1, 9, 12, 20))
    assert plan.missing_intervals["s.days"] == (_partial(dt(2024, 1, 9), dt(2024, 1, 9, 12)),)
    # The parent's new time is 11:00-12:00: the hour 11 (new) and the two before it (lookback), not the day so far.
    assert [i.start.hour for i in plan.missing_intervals["s.hours"]] == [9, 10, 11]


def test_a_unique_key_write_of_the_day_so_far_upserts_over_its_earlier_part():
    from types import SimpleNamespace

    from dagster_sparkmesh.execution.writes.keyed import rebuilt_span
    from tests.plan.conftest import make_model

    keyed = make_model("s.u", "SELECT id, ds FROM src.events", ["src.events"], cron="@hourly", interval_unit="day",
                       allow_partials=True, kind={"name": "INCREMENTAL_BY_UNIQUE_KEY", "unique_key": ["id"]})
    held = [Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 9, 11))]
    again = SimpleNamespace(model=keyed, span=Interval(start=dt(2024, 1, 9), end=dt(2024, 1, 9, 12)))
    assert rebuilt_span(again, held) is None  # the same day, more of it: an upsert, not a rebuild of the table
    behind = SimpleNamespace(model=keyed, span=Interval(start=dt(2024, 1, 5), end=dt(2024, 1, 6)))
    assert rebuilt_span(behind, held) == Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 9, 11))
