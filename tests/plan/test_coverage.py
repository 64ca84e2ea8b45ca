"""An interval is complete only if the data it was computed from was: what a model's parents lack (pure)."""

from datetime import datetime as dt

from dagster_sparkmesh.plan.coverage import complete_part, input_gaps, lacking_inputs
from dagster_sparkmesh.snapshot.records import Interval
from tests.plan.conftest import FakeState, make_model, make_project

NOW = dt(2024, 1, 10, 6, 30)
FULL = {"name": "FULL"}


def days(first: int, last: int) -> list[Interval]:
    return [Interval(start=dt(2024, 1, d), end=dt(2024, 1, d + 1)) for d in range(first, last + 1)]


def _project():
    return make_project(
        make_model("s.daily", "SELECT ds FROM src.e", ["src.e"]),
        make_model("s.seed_like", "SELECT 1 AS x", kind={"name": "SEED", "path": "x.csv"}),
        make_model("s.total", "SELECT COUNT(*) FROM s.daily CROSS JOIN s.seed_like", ["s.daily", "s.seed_like"], kind=FULL),
    )


def _state(daily: list[Interval], seed: list[Interval]) -> FakeState:
    state = FakeState()
    state.intervals[("s.daily", "vd")] = daily
    state.intervals[("s.seed_like", "vs")] = seed
    return state


VERSIONS = {"s.daily": "vd", "s.seed_like": "vs", "s.total": "vt"}


def test_a_full_model_over_three_days_of_its_parent_is_complete_for_those_days_only():
    state = _state(days(1, 3), days(9, 9))
    gaps = input_gaps(_project(), "s.total", VERSIONS.get, state, NOW)
    assert [(g.parent, g.interval) for g in gaps] == [("s.daily", Interval(start=dt(2024, 1, 4), end=dt.max))]
    complete, incomplete = complete_part(days(1, 9), gaps)
    assert complete == days(1, 3) and incomplete == days(4, 9)


def test_external_parents_and_loaded_seeds_lack_nothing():
    state = _state(days(1, 9), days(9, 9))  # a seed is complete once loaded, whatever its interval
    gaps = input_gaps(_project(), "s.total", VERSIONS.get, state, NOW)
    assert [(g.parent, g.interval.start) for g in gaps] == [("s.daily", dt(2024, 1, 10))]  # only time not yet run
    assert input_gaps(_project(), "s.daily", VERSIONS.get, state, NOW) == []


def test_a_seed_not_loaded_yet_lacks_everything():
    gaps = input_gaps(_project(), "s.total", VERSIONS.get, _state(days(1, 9), []), NOW)
    assert "s.seed_like" in [g.parent for g in gaps]
    assert complete_part(days(1, 9), gaps) == ([], days(1, 9))


def test_promotion_check_names_the_model_and_the_gap_within_the_window():
    state = _state(days(1, 3), days(9, 9))
    state.intervals[("s.total", "vt")] = days(1, 9)  # recorded by a release that did not check its inputs
    window = Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))
    found = lacking_inputs(_project(), VERSIONS, window, state, NOW)
    assert list(found) == ["s.total"]
    assert [g.describe() for g in found["s.total"]] == ["s.daily lacks [2024-01-04, 2024-01-10)"]
    state.intervals[("s.total", "vt")] = days(1, 3)
    assert lacking_inputs(_project(), VERSIONS, window, state, NOW) == {}


def test_a_lookback_interval_needs_the_days_it_looks_back_at():
    gaps = [g for g in input_gaps(_project(), "s.total", VERSIONS.get, _state(days(3, 9), days(9, 9)), NOW)]
    # 01-03 and 01-04 read 01-01 and 01-02 with lookback 2, which the parent lacks; 01-05 reads 01-03..01-05 only.
    complete, incomplete = complete_part(days(3, 5), gaps, ("@daily", 2))
    assert complete == days(5, 5) and incomplete == days(3, 4)
    assert complete_part(days(3, 5), gaps) == (days(3, 5), [])
