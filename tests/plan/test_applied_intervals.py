"""What a later plan asks for is what the executor really recorded: it records only the intervals whose inputs were
complete (``plan.coverage``, SQLMesh's rule), and a plan lists a child's intervals only as far as its parents reach
(``plan.windows``), so the two agree: every listed interval is recorded."""

from datetime import datetime as dt
from datetime import timedelta

import pytest

from dagster_sparkmesh.snapshot.records import Interval

pytestmark = pytest.mark.slow


def hours_of_the_10th(last: int) -> tuple[Interval, ...]:
    """The hours of 2024-01-10 from midnight to ``last`` o'clock (exclusive)."""
    midnight = dt(2024, 1, 10)
    hour = timedelta(hours=1)
    return tuple(Interval(start=midnight + h * hour, end=midnight + (h + 1) * hour) for h in range(last))


def _models(model):
    """An hourly model on a daily parent: each of its hours reads the parent's day."""
    return [
        model("s.daily", "SELECT id, updated_at FROM src.e", ["src.e"],
              kind={"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "updated_at"}),
        model("s.hourly", "SELECT id, updated_at FROM s.daily", ["s.daily"], cron="@hourly",
              kind={"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "updated_at"}),
    ]  # fmt: skip


def test_an_hourly_child_computes_a_day_once_its_daily_parent_has_it(world, model):
    # At 06:30 on the 10th the daily parent has up to the 9th: the child's window ends there too (``plan.windows``).
    first = world.apply(*_models(model))
    assert first.missing_intervals["s.daily"][-1].end == dt(2024, 1, 10)
    assert first.missing_intervals["s.hourly"][-1].end == dt(2024, 1, 10)
    assert not any(result.incomplete for result in world.results[-1].models)
    recorded = world.state.get_intervals("s.hourly", first.version_of("s.hourly"))
    assert recorded == [Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))]

    next_day = dt(2024, 1, 11, 0, 30)
    caught_up = world.apply(*_models(model), execution_time=next_day)
    assert caught_up.missing_intervals == {
        "s.daily": (Interval(start=dt(2024, 1, 10), end=dt(2024, 1, 11)),), "s.hourly": hours_of_the_10th(24),
    }
    assert world.plan(*_models(model), execution_time=next_day).missing_intervals == {}
