"""Dagster may launch one plan's promotion twice at once (from a backfill and from the automation sensor): the run
that loses the lease to the other waits for it, and counts as promoted once the environment points at its plan."""

from __future__ import annotations

import subprocess
import threading
import time
from datetime import datetime
from types import SimpleNamespace

from dagster_sparkmesh.clock import utc_now
from dagster_sparkmesh.execution.promotion import promoted_by_another
from dagster_sparkmesh.snapshot.records import Environment
from dagster_sparkmesh.state import LeaseHolder, open_state_store

OTHER_PROCESS = LeaseHolder(user="ann", host=LeaseHolder.current().host, pid=1)


def _environment(plan_id: str) -> Environment:
    moment = datetime(2024, 1, 2)
    return Environment(name="prod", plan_id=plan_id, start=moment, promoted_at=moment)


def test_the_loser_waits_for_the_same_plan_then_counts_it_promoted(tmp_path):
    with open_state_store(None, tmp_path) as state:
        ctx, plan = SimpleNamespace(state=state, environment="prod", clock=utc_now), SimpleNamespace(plan_id="p1")
        assert not promoted_by_another(ctx, plan, timeout=1)  # nobody promotes it: no wait
        lease = state.acquire_promotion_lease("prod", "p1", OTHER_PROCESS)

        def other_promotion_finishes() -> None:
            time.sleep(0.8)
            state.promote_environment(_environment("p1"), None, lease=lease)

        began = time.monotonic()
        finisher = threading.Thread(target=other_promotion_finishes)
        finisher.start()
        assert promoted_by_another(ctx, plan, timeout=30)
        finisher.join()
        assert 0.7 < time.monotonic() - began < 10


def test_another_plan_holding_the_lease_is_not_this_plans_promotion(tmp_path):
    with open_state_store(None, tmp_path) as state:
        state.acquire_promotion_lease("prod", "p2", OTHER_PROCESS)
        ctx = SimpleNamespace(state=state, environment="prod", clock=utc_now)
        began = time.monotonic()
        assert not promoted_by_another(ctx, SimpleNamespace(plan_id="p1"), timeout=30)
        assert time.monotonic() - began < 1  # no wait for somebody else's plan


def test_a_lease_of_the_same_plan_whose_holder_died_is_not_waited_for(tmp_path):
    with open_state_store(None, tmp_path) as state:
        dead = LeaseHolder(user="ann", host=LeaseHolder.current().host, pid=_a_dead_pid())
        state.acquire_promotion_lease("prod", "p1", dead)
        ctx = SimpleNamespace(state=state, environment="prod", clock=utc_now)
        began = time.monotonic()
        assert not promoted_by_another(ctx, SimpleNamespace(plan_id="p1"), timeout=30)
        assert time.monotonic() - began < 1  # a retry takes the lease over at once: waiting would only delay it


def _a_dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid
