from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from dagster_sparkmesh.errors import StateError


def test_plan_applications_are_logged_start_to_end(state_location):
    ticks = iter(datetime(2024, 6, 1) + timedelta(minutes=n) for n in range(100))
    store = state_location.open(clock=lambda: next(ticks))
    try:
        store.record_plan_start("p1", "dev", "ann", "host1", '{"added": 2}')
        store.record_plan_start("p2", "prod", "bob", "host2", "{}")
        store.record_plan_end("p1", "success", '{"rows": 10}')
        first, second = store.list_plan_applications()
    finally:
        store.close()
    assert (first.plan_id, first.environment, first.user, first.host, first.summary_json) == (
        "p1", "dev", "ann", "host1", '{"added": 2}'
    )
    assert first.started_at < first.ended_at
    assert (first.outcome, first.metrics_json) == ("success", '{"rows": 10}')
    assert (second.plan_id, second.ended_at, second.outcome) == ("p2", None, None)


def test_a_retried_plan_closes_its_latest_attempt(state_store):
    state_store.record_plan_start("p1", "dev", "ann", "h", "{}")
    state_store.record_plan_end("p1", "failed", "{}")
    state_store.record_plan_start("p1", "dev", "ann", "h", "{}")
    state_store.record_plan_end("p1", "success", "{}")
    assert [a.outcome for a in state_store.list_plan_applications()] == ["failed", "success"]


def test_ending_a_plan_that_never_started_is_an_error(state_store):
    with pytest.raises(StateError, match="no running application of plan nope"):
        state_store.record_plan_end("nope", "success", "{}")
