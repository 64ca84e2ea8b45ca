"""Issue 11: each divergence between prod and a from-scratch build of the same files, as a user reaches it.

Every test ends by comparing each prod view with a fresh build (row count and a checksum per column), and most
also assert the fact a user would check by hand (the latest day per customer, the lifetime totals).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from dagster_sparkmesh.execution.plans import plan_for
from tests.lifecycle.cli_actions import describe, inclusive_end
from tests.lifecycle.project import add_late_data, with_changes

pytestmark = pytest.mark.slow


def _latest_day_per_customer(lifecycle) -> dict[int, object]:
    rows = lifecycle.engine.spark.sql(
        f"SELECT customer_id, MAX(ds) FROM {lifecycle.project.name('src.events')} GROUP BY customer_id"
    ).collect()
    return {r[0]: r[1] for r in rows}


def test_a_restating_a_parent_sub_range_keeps_its_unique_key_child_correct(lifecycle):
    assert lifecycle.plan("--end", "2024-01-10").exit_code == 0
    restated = lifecycle.plan("--restate-model", "src.events", "--start", "2024-01-03", "--end", "2024-01-04")
    assert restated.exit_code == 0, restated.output

    latest = {row[0]: row[1] for row in lifecycle.rows("m.latest", "customer_id, last_ds")}
    assert latest == _latest_day_per_customer(lifecycle)
    assert describe(lifecycle.divergences(end=inclusive_end("2024-01-10"))) == ""


def test_b_a_non_breaking_change_moves_the_view_child_to_the_new_table(lifecycle):
    assert lifecycle.plan("--end", "2024-01-10").exit_code == 0
    lifecycle.edit(with_changes(lifecycle.spec, extra_columns=1))
    changed = lifecycle.plan("--end", "2024-01-10")
    assert changed.exit_code == 0, changed.output
    assert "last_event_ds" in [c for c, _ in lifecycle.engine.spark.table(lifecycle.project.name("m.report")).dtypes]
    assert describe(lifecycle.divergences(end=inclusive_end("2024-01-10"))) == ""

    # Once the previous table of customer_totals has expired, the janitor drops it: the view must not read it.
    lifecycle.janitor(clock=datetime.utcnow() + timedelta(days=30))
    assert len(lifecycle.rows("m.report", "customer_id, last_event_ds, last_ds")) == 6
    assert describe(lifecycle.divergences(end=inclusive_end("2024-01-10"))) == ""


def test_c_forward_only_effective_from_the_start_refreshes_full_and_view_children(lifecycle):
    assert lifecycle.plan("--end", "2024-01-14").exit_code == 0
    lifecycle.edit(with_changes(lifecycle.spec, formula=4))
    forward = lifecycle.plan("--forward-only", "--effective-from", "2024-01-01", "--end", "2024-01-14")
    assert forward.exit_code == 0, forward.output
    assert describe(lifecycle.divergences(end=inclusive_end("2024-01-14"))) == ""

    # A second plan has nothing left to repair.
    again = lifecycle.plan("--end", "2024-01-14")
    assert again.exit_code == 0, again.output
    assert describe(lifecycle.divergences(end=inclusive_end("2024-01-14"))) == ""


def test_d_restating_a_parent_recomputes_the_lookback_days_of_its_child(lifecycle):
    assert lifecycle.plan("--end", "2024-01-10").exit_code == 0
    add_late_data(lifecycle.engine, lifecycle.project, ["2024-01-03", "2024-01-04"], bonus=1000)
    restated = lifecycle.plan("--restate-model", "src.events", "--start", "2024-01-03", "--end", "2024-01-04")
    assert restated.exit_code == 0, restated.output

    # rolling's rows of 01-05 and 01-06 read 01-03 and 01-04: they carry the late data too.
    by_day = {str(row[0]): row[1] for row in lifecycle.rows("m.rolling", "ds, amount_3d")}
    assert by_day["2024-01-06"] > 1000 and by_day["2024-01-07"] < 1000
    assert describe(lifecycle.divergences(end=inclusive_end("2024-01-10"))) == ""


def test_e_a_short_plan_then_a_longer_one_rebuilds_the_full_models(lifecycle):
    assert lifecycle.plan("--end", "2024-01-03").exit_code == 0
    longer = lifecycle.plan("--end", "2024-01-14")
    assert longer.exit_code == 0, longer.output

    totals = lifecycle.rows("m.customer_totals", "customer_id, events")
    assert sum(row[1] for row in totals) == len(lifecycle.rows("src.events", "event_id"))
    assert describe(lifecycle.divergences(end=inclusive_end("2024-01-14"))) == ""


def test_f_a_metadata_only_change_lands_and_leaves_nothing_to_plan(lifecycle):
    lifecycle.edit(with_changes(lifecycle.spec, end="2024-01-13"))
    assert lifecycle.plan("--end", "2024-01-14").exit_code == 0
    lifecycle.edit(with_changes(lifecycle.spec, end="2024-01-14", owner="bob"))
    changed = lifecycle.plan("--end", "2024-01-14")
    assert changed.exit_code == 0, changed.output

    ctx = lifecycle.context()
    try:
        assert not plan_for(ctx, None, inclusive_end("2024-01-14")).has_changes
    finally:
        ctx.close()
    again = lifecycle.plan("--end", "2024-01-14")
    assert "No changes" in again.output, again.output
    ran = lifecycle.cli("run", "prod")
    assert ran.exit_code == 0, ran.output
    assert describe(lifecycle.divergences(end=inclusive_end("2024-01-14"))) == ""
