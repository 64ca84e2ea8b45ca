"""``plan.auto_restatements``: which models a run of prod restates on their ``auto_restatement_cron``, and over what
(the rule SQLMesh's ``apply_auto_restatements`` follows; the CLI's runs on Spark: tests/cli/test_auto_restatement.py)."""

from datetime import datetime as dt

from dagster_sparkmesh.plan.auto_restatements import due_restatements
from dagster_sparkmesh.snapshot.records import Interval

from tests.plan.conftest import make_model

HELD = {"s.m": [Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))]}


def _model(**kind):
    return make_model("s.m", "SELECT ds FROM src.e", ["src.e"],
                      kind={"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds", **kind})


def _due(model, looked: dt, at: dt, held=HELD):
    return due_restatements({"s.m": model}, held, {"s.m": looked}, at)


def test_a_tick_since_the_last_look_restates_the_latest_intervals_before_the_execution_time():
    weekly = _model(auto_restatement_cron="@weekly", auto_restatement_intervals=2)
    assert _due(weekly, dt(2024, 1, 5), dt(2024, 1, 6, 23)) == {}  # Sunday 01-07 not reached
    assert _due(weekly, dt(2024, 1, 5), dt(2024, 1, 7)) == {"s.m": Interval(start=dt(2024, 1, 5), end=dt(2024, 1, 7))}
    # The range ends at the execution time floored to the model's unit, even hours after the tick.
    assert _due(weekly, dt(2024, 1, 5), dt(2024, 1, 9, 15)) == {"s.m": Interval(start=dt(2024, 1, 7), end=dt(2024, 1, 9))}
    assert _due(weekly, dt(2024, 1, 7), dt(2024, 1, 13)) == {}  # the last look was at the tick itself


def test_without_a_count_everything_recorded_is_restated():
    hourly = _model(auto_restatement_cron="0 * * * *")
    assert _due(hourly, dt(2024, 1, 10), dt(2024, 1, 10, 1)) == {"s.m": Interval(start=dt(2024, 1, 1), end=dt(2024, 1, 10))}


def test_no_restatement_without_a_cron_without_records_or_with_restatement_disabled():
    assert _due(_model(), dt(2024, 1, 1), dt(2024, 2, 1)) == {}
    assert _due(_model(auto_restatement_cron="@daily"), dt(2024, 1, 1), dt(2024, 2, 1), held={}) == {}
    disabled = _model(auto_restatement_cron="@daily", disable_restatement=True)
    assert _due(disabled, dt(2024, 1, 1), dt(2024, 2, 1)) == {}
    assert due_restatements({"s.m": _model(auto_restatement_cron="@daily")}, HELD, {}, dt(2024, 2, 1)) == {}
