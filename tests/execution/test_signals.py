"""Signals gate what is computed: held-back intervals stay missing and the environment waits for them (Spark)."""

from datetime import datetime

import pytest

from dagster_sparkmesh.execution.apply import NotReady, apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.records import Interval

GATED = '''
import pandas as pd
from dagster_sparkmesh import model


@model(
    "shop.gated",
    kind=dict(name="INCREMENTAL_BY_TIME_RANGE", time_column="ds"),
    columns={"ds": "date", "n": "int"},
    start="2024-01-01",
    signals=["landed_before"],
)
def execute(context, start, end, execution_time, **kwargs):
    days = pd.date_range(start, end, inclusive="left").date
    return pd.DataFrame({"ds": days, "n": [1] * len(days)})
'''

SIGNAL = '''
from dagster_sparkmesh import signal


@signal()
def landed_before(batch):
    """Days up to the one written in landed.txt have landed."""
    from datetime import datetime
    from pathlib import Path
    limit = datetime.fromisoformat(Path(__file__).with_name("landed.txt").read_text().strip())
    return [(start, end) for start, end in batch if end.replace(tzinfo=None) <= limit]
'''


def _write(project, day: str) -> None:
    """The model and its signal; ``day``: the data has landed up to then (the model itself does not change)."""
    (project / "models" / "gated.py").write_text(GATED)
    (project / "signals").mkdir(exist_ok=True)
    (project / "signals" / "landing.py").write_text(SIGNAL)
    (project / "signals" / "landed.txt").write_text(day)


def test_held_back_intervals_stay_missing_and_nothing_is_promoted(spark, mini_project, make_context):
    _write(mini_project, "2024-01-03")
    ctx = make_context(mini_project)
    with pytest.raises(NotReady, match="not promoting prod: signals report 1 model") as caught:
        apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 5)))
    assert "shop.gated: 2 interval(s) not ready, first [2024-01-03 00:00" in caught.value.snippet
    assert "(signal landed_before)" in caught.value.snippet
    version = plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 5)).version_of("shop.gated")
    assert ctx.state.get_intervals("shop.gated", version) == [Interval(start=datetime(2024, 1, 1), end=datetime(2024, 1, 3))]
    assert ctx.state.get_environment("prod") is None  # no view, no environment
    assert ctx.state.list_plan_applications()[-1].outcome == "waiting"

    _write(mini_project, "2024-01-09")  # the data landed: the same plan now completes and promotes
    ctx = make_context(mini_project)
    again = plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 5))
    assert [i.start.day for i in again.missing_intervals["shop.gated"]] == [3, 4]
    apply_plan(ctx, again)
    assert spark.sql("SELECT COUNT(*) FROM shop.gated").collect()[0][0] == 4
