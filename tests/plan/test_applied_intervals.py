"""What a later plan asks for is what the executor really recorded: it records only the intervals whose inputs were
complete (``plan.coverage``, SQLMesh's rule). A plan lists a child's intervals only as far as its parents' crons
reach (``plan.windows``), so normally every listed interval is recorded; where a parent still lacks days (a signal
held them back), the child's days computed from it stay missing."""

from datetime import datetime as dt
from datetime import timedelta

import pytest

from dagster_sparkmesh.execution.apply import NotReady
from dagster_sparkmesh.model.records import SignalCall
from dagster_sparkmesh.snapshot.records import Interval


def hours_of_the_10th(last: int) -> tuple[Interval, ...]:
    """The hours of 2024-01-10 from midnight to ``last`` o'clock (exclusive)."""
    midnight = dt(2024, 1, 10)
    hour = timedelta(hours=1)
    return tuple(Interval(start=midnight + h * hour, end=midnight + (h + 1) * hour) for h in range(last))


def days(first: int, last: int) -> tuple[Interval, ...]:
    return tuple(Interval(start=dt(2024, 1, d), end=dt(2024, 1, d + 1)) for d in range(first, last + 1))


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


LANDED_BEFORE = '''
from dagster_sparkmesh import signal


@signal()
def landed_before(batch):
    """The days before the one written in landed.txt have landed."""
    from datetime import datetime
    from pathlib import Path
    limit = datetime.fromisoformat(Path(__file__).with_name("landed.txt").read_text().strip())
    return [(start, end) for start, end in batch if end.replace(tzinfo=None) <= limit]
'''


def _gated(world, model, landed: str):
    """s.gated waits for its data to land (a signal), s.child reads it and waits for nothing."""
    signals = world.path / "signals"
    signals.mkdir(exist_ok=True)
    (signals / "landing.py").write_text(LANDED_BEFORE)
    (signals / "landed.txt").write_text(landed)
    return [
        model("s.gated", "SELECT id, ds FROM src.e", ["src.e"], signals=(SignalCall(name="landed_before"),)),
        model("s.child", "SELECT id, ds FROM s.gated", ["s.gated"]),
    ]


def test_a_child_computed_while_its_parent_lacks_days_leaves_those_days_missing(world, model):
    with pytest.raises(NotReady, match="signals report 1 model"):
        world.apply(*_gated(world, model, "2024-01-05"))
    # The child ran over all nine days (it has no signal), but read a parent that lacked the 5th to the 9th.
    plan = world.plan(*_gated(world, model, "2024-01-05"))
    before_the_5th = [Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 5))]
    assert world.state.get_intervals("s.gated", plan.version_of("s.gated")) == before_the_5th
    assert world.state.get_intervals("s.child", plan.version_of("s.child")) == before_the_5th
    assert plan.missing_intervals == {"s.gated": days(5, 9), "s.child": days(5, 9)}

    world.apply(*_gated(world, model, "2024-01-10"))  # the data landed: both complete, prod is promoted
    assert world.plan(*_gated(world, model, "2024-01-10")).missing_intervals == {}
    assert world.spark_rows("SELECT COUNT(*), COUNT(DISTINCT ds) FROM s.child") == [(9, 9)]
