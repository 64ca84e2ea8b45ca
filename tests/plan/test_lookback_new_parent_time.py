"""A lookback model recomputes the intervals it holds that read time its parents compute for the first time."""

from datetime import datetime as dt


from dagster_sparkmesh.snapshot.records import Interval


TIME_RANGE = {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds"}


def days(*numbers: tuple[int, int]) -> tuple[Interval, ...]:
    """(month, day) pairs as daily intervals of 2023-12 and 2024-01."""
    return tuple(
        Interval(start=dt(2023 if m == 12 else 2024, m, d), end=dt(2023 if m == 12 else 2024, m, d) + (dt(2024, 1, 2) - dt(2024, 1, 1)))
        for m, d in numbers
    )


def _models(model, start: str):
    return [
        model("s.raw", "SELECT id, ds FROM src.e", ["src.e"], start=start),
        model("s.rolling", "SELECT id, ds FROM s.raw", ["s.raw"], start=start, kind={**TIME_RANGE, "lookback": 2}),
        model("s.plain", "SELECT id, ds FROM s.raw", ["s.raw"], start=start),
    ]


def test_a_start_moved_earlier_recomputes_the_lookback_days_that_read_the_new_day(world, model):
    world.apply(*_models(model, "2024-01-01"))
    plan = world.plan(*_models(model, "2023-12-31"))
    assert plan.missing_intervals["s.raw"] == days((12, 31))
    # 01-01 and 01-02 read 12-31 (two days back), which the parent did not have when they were computed.
    assert plan.missing_intervals["s.rolling"] == days((12, 31), (1, 1), (1, 2))
    assert plan.missing_intervals["s.plain"] == days((12, 31))  # reads its own day only


def test_a_daily_run_recomputes_only_what_lookback_asks(world, model):
    world.apply(*_models(model, "2024-01-01"))
    plan = world.plan(*_models(model, "2024-01-01"), execution_time=dt(2024, 1, 11, 1))
    assert plan.missing_intervals["s.raw"] == days((1, 10))
    assert plan.missing_intervals["s.rolling"] == days((1, 8), (1, 9), (1, 10))  # the lookback, nothing more


def test_a_parents_new_version_or_its_own_lookback_is_not_new_time_for_the_child(world, model):
    def models(raw_query: str, raw_lookback: int = 0):
        return [
            model("s.raw", raw_query, ["src.e"], kind={**TIME_RANGE, "lookback": raw_lookback} if raw_lookback else TIME_RANGE),
            model("s.rolling", "SELECT id, ds FROM s.raw", ["s.raw"], kind={**TIME_RANGE, "lookback": 1}),
        ]

    world.apply(*models("SELECT id, ds FROM src.e", raw_lookback=3))
    daily = world.plan(*models("SELECT id, ds FROM src.e", raw_lookback=3), execution_time=dt(2024, 1, 11, 1))
    assert daily.missing_intervals["s.raw"] == days((1, 7), (1, 8), (1, 9), (1, 10))  # its own lookback
    assert daily.missing_intervals["s.rolling"] == days((1, 9), (1, 10))  # its own, not the parent's
    # A non-breaking change gives the parent a new version computed anew; the child keeps its version and history.
    changed = world.plan(*models("SELECT id, ds, 1 AS one FROM src.e", raw_lookback=3))
    assert changed.categories["s.raw"].value == "non_breaking" and "s.rolling" not in changed.missing_intervals
