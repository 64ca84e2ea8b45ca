"""The oracle itself: a straight build agrees with a fresh build, and a tampered view is caught."""

from __future__ import annotations

from tests.lifecycle.cli_actions import describe, inclusive_end


def test_a_straight_build_agrees_with_a_fresh_build(lifecycle):
    result = lifecycle.plan("--end", "2024-01-10")
    assert result.exit_code == 0, result.output
    assert describe(lifecycle.divergences(end=inclusive_end("2024-01-10"))) == ""
    totals = lifecycle.rows("m.customer_totals", "customer_id, events")
    events = lifecycle.rows("src.events", "event_id")
    assert sum(t[1] for t in totals) == len(events) > 0


def test_a_view_that_differs_is_reported(lifecycle):
    assert lifecycle.plan("--end", "2024-01-10").exit_code == 0
    found = lifecycle.divergences(end=inclusive_end("2024-01-09"))
    # One day less: every model that reads the source's days differs; the seed does not.
    assert {d.model for d in found} == {
        "src.events", "m.daily", "m.rolling", "m.customer_totals", "m.region_totals", "m.latest", "m.report"
    }
