"""Promotion leases on both backends: one holder at a time, take-overs only when safe, released with the swap."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa

from dagster_sparkmesh.errors import StateConflictError
from dagster_sparkmesh.snapshot.records import Environment, EnvironmentSnapshot
from dagster_sparkmesh.state import LeaseHolder, migrations, schema
from dagster_sparkmesh.state.connection import create_state_engine, ensure_schema, write_transaction
from dagster_sparkmesh.state.leases import LEASE_DURATION
from dagster_sparkmesh.state.migrations import SCHEMA_VERSION
from dagster_sparkmesh.state.store import default_state_url

T0 = datetime(2024, 6, 1, 12)
ME = LeaseHolder.current()


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(state_location, clock):
    opened = state_location.open(clock=clock)
    yield opened
    opened.close()


def environment(plan_id: str, previous: str | None = None) -> Environment:
    return Environment(
        name="dev",
        plan_id=plan_id,
        previous_plan_id=previous,
        snapshots=(EnvironmentSnapshot(name="db.a", fingerprint=f"f_{plan_id}", version="v1", kind_name="full"),),
        start=datetime(2024, 1, 1),
        promoted_at=T0,
    )


def _finished_process_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(child.stdout)


def test_a_second_plan_is_refused_with_the_holder_and_since_when(store, clock):
    lease = store.acquire_promotion_lease("dev", "p1")
    assert (lease.plan_id, lease.holder, lease.acquired_at, lease.expires_at) == ("p1", ME, T0, T0 + LEASE_DURATION)
    assert store.get_promotion_lease("dev") == lease
    clock.now = T0 + timedelta(minutes=3)
    with pytest.raises(StateConflictError) as caught:
        store.acquire_promotion_lease("dev", "p2")
    assert str(caught.value) == (
        f"environment dev is being promoted by plan p1 ({ME.user}@{ME.host} pid {os.getpid()}) since "
        "2024-06-01 12:00:00 UTC; its lease expires at 2024-06-01 12:10:00 UTC\n"
        "  hint: no view was changed: wait for that promotion to finish, then plan again (this plan may be superseded)"
    )
    assert store.get_promotion_lease("dev") == lease
    assert store.acquire_promotion_lease("prod", "p2").environment == "prod"  # leases are per environment


def test_the_same_plan_retakes_its_lease_and_the_previous_token_cannot_swap(store):
    first = store.acquire_promotion_lease("dev", "p1")
    again = store.acquire_promotion_lease("dev", "p1")
    assert again.token != first.token
    with pytest.raises(StateConflictError, match="plan p1 lost the promotion lease of environment dev"):
        store.promote_environment(environment("p1"), None, lease=first)
    assert store.get_environment("dev") is None
    store.promote_environment(environment("p1"), None, lease=again)
    assert store.get_environment("dev").plan_id == "p1"
    assert store.get_promotion_lease("dev") is None


def test_another_plan_takes_over_only_once_the_lease_expired(store, clock):
    first = store.acquire_promotion_lease("dev", "p1")
    clock.now = T0 + LEASE_DURATION - timedelta(seconds=1)
    with pytest.raises(StateConflictError, match="being promoted by plan p1"):
        store.acquire_promotion_lease("dev", "p2")
    clock.now = T0 + LEASE_DURATION
    taken = store.acquire_promotion_lease("dev", "p2")
    assert (taken.plan_id, taken.acquired_at) == ("p2", T0 + LEASE_DURATION)
    with pytest.raises(StateConflictError, match=r"lost the promotion lease .*: plan p2 \(.*\) took it over"):
        store.renew_promotion_lease(first, views_touched=True)
    store.release_promotion_lease(first)  # a no-op: the lease is p2's now
    assert store.get_promotion_lease("dev") == taken


def test_renewing_pushes_the_expiry_back(store, clock):
    lease = store.acquire_promotion_lease("dev", "p1")
    clock.now = T0 + timedelta(minutes=8)
    renewed = store.renew_promotion_lease(lease, views_touched=True)
    assert (renewed.expires_at, renewed.views_touched) == (clock.now + LEASE_DURATION, True)
    clock.now = T0 + timedelta(minutes=12)
    with pytest.raises(StateConflictError, match="lease expires at 2024-06-01 12:18:00 UTC"):
        store.acquire_promotion_lease("dev", "p2")


def test_a_dead_holder_on_this_host_is_taken_over_at_once_a_live_or_remote_one_is_not(store):
    dead_here = LeaseHolder(user=ME.user, host=ME.host, pid=_finished_process_pid())
    store.acquire_promotion_lease("dev", "p1", holder=dead_here)
    assert store.acquire_promotion_lease("dev", "p2").plan_id == "p2"

    store.acquire_promotion_lease("qa", "p1", holder=LeaseHolder(user=ME.user, host=ME.host, pid=os.getppid()))
    with pytest.raises(StateConflictError, match="being promoted by plan p1"):
        store.acquire_promotion_lease("qa", "p2")
    remote = LeaseHolder(user=ME.user, host=f"not-{ME.host}", pid=dead_here.pid)
    store.acquire_promotion_lease("stage", "p1", holder=remote)
    with pytest.raises(StateConflictError, match=f"being promoted by plan p1 \\({ME.user}@not-{ME.host}"):
        store.acquire_promotion_lease("stage", "p2")


def test_the_lease_goes_with_a_successful_swap_and_stays_when_the_swap_is_refused(store):
    store.promote_environment(environment("p1"), None, lease=store.acquire_promotion_lease("dev", "p1"))
    assert (store.get_environment("dev").plan_id, store.get_promotion_lease("dev")) == ("p1", None)

    lease = store.acquire_promotion_lease("dev", "p3")
    with pytest.raises(StateConflictError, match="environment dev was promoted by plan p1 after this plan was built"):
        store.promote_environment(environment("p3", "p0"), "p0", lease=lease)
    assert store.get_promotion_lease("dev") == lease, "the refused swap rolled back the release as well"
    assert store.get_environment("dev").plan_id == "p1"
    store.release_promotion_lease(lease)
    assert store.get_promotion_lease("dev") is None


def test_a_failure_after_views_were_touched_leaves_an_expired_marker_for_the_next_plan(store, clock):
    lease = store.renew_promotion_lease(store.acquire_promotion_lease("dev", "p1"), views_touched=True)
    clock.now = T0 + timedelta(minutes=1)
    store.release_promotion_lease(lease)
    marker = store.get_promotion_lease("dev")
    assert (marker.plan_id, marker.views_touched, marker.expires_at) == ("p1", True, clock.now)
    taken = store.acquire_promotion_lease("dev", "p2")
    assert (taken.plan_id, taken.views_touched) == ("p2", True)
    store.promote_environment(environment("p2"), None, lease=taken)
    assert store.get_promotion_lease("dev") is None


def test_deleting_an_environment_drops_its_expired_lease_only(store, clock):
    store.promote_environment(environment("p1"), None)
    store.acquire_promotion_lease("dev", "p2")
    assert store.delete_environment("dev")
    assert store.get_promotion_lease("dev").plan_id == "p2", "a live lease belongs to a promotion under way"
    store.promote_environment(environment("p1"), None)
    clock.now = T0 + LEASE_DURATION
    assert store.delete_environment("dev")
    assert store.get_promotion_lease("dev") is None


def test_racing_threads_with_different_plans_get_exactly_one_lease(state_location):
    racers = 6
    stores = [state_location.open() for _ in range(racers)]
    start = threading.Barrier(racers)
    won, refused = [], []

    def race(index: int) -> None:
        start.wait()
        try:
            won.append(stores[index].acquire_promotion_lease("dev", f"p{index}").plan_id)
        except StateConflictError as error:
            refused.append(str(error))

    threads = [threading.Thread(target=race, args=(index,)) for index in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert len(won) == 1 and len(refused) == racers - 1
        assert all(f"being promoted by plan {won[0]} " in message for message in refused)
        assert stores[0].get_promotion_lease("dev").plan_id == won[0]
    finally:
        for opened in stores:
            opened.close()


def test_a_v2_store_is_migrated_to_have_promotion_leases(state_location):
    url = state_location.url or default_state_url(state_location.project_path)
    engine = create_state_engine(url, state_location.schema)
    with write_transaction(engine) as connection:
        ensure_schema(connection, state_location.schema)
        migrations.MIGRATIONS[0](connection)
        migrations.MIGRATIONS[1](connection)
        connection.execute(
            sa.insert(schema.versions).values(
                id=1, schema_version=2, sqlglot_version="29.0.0", package_version="0.1.0", updated_at="2024-01-01"
            )
        )
    assert "promotion_leases" not in sa.inspect(engine).get_table_names()
    engine.dispose()
    store = state_location.open()
    try:
        assert store.versions().schema_version == SCHEMA_VERSION >= 3
        assert store.acquire_promotion_lease("dev", "p1").plan_id == "p1"
    finally:
        store.close()
