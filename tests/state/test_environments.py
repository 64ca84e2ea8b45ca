from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest

from dagster_sparkmesh.errors import StateConflictError
from dagster_sparkmesh.snapshot.records import Environment, EnvironmentSnapshot
from dagster_sparkmesh.state import environments
from dagster_sparkmesh.state.connection import write_transaction

NOW = datetime(2024, 6, 1, 12)


def environment(plan_id: str, previous: str | None = None, name: str = "dev") -> Environment:
    return Environment(
        name=name,
        plan_id=plan_id,
        previous_plan_id=previous,
        snapshots=(EnvironmentSnapshot(name="db.a", fingerprint=f"f_{plan_id}", version="v1", kind_name="full"),),
        start=datetime(2024, 1, 1),
        promoted_at=datetime(2024, 6, 1, 10),
    )


def test_first_promotion_and_round_trip(state_store):
    assert state_store.get_environment("dev") is None
    state_store.promote_environment(environment("p1"), expected_plan_id=None)
    state_store.promote_environment(environment("q1", name="prod"), expected_plan_id=None)
    assert state_store.get_environment("dev") == environment("p1")
    assert [e.name for e in state_store.list_environments()] == ["dev", "prod"]
    assert state_store.environment_history("dev") == []


def test_promotion_swaps_when_the_expected_plan_is_current_and_keeps_history(state_store):
    state_store.promote_environment(environment("p1"), None)
    state_store.promote_environment(environment("p2", "p1"), "p1")
    state_store.promote_environment(environment("p3", "p2"), "p2")
    assert state_store.get_environment("dev").plan_id == "p3"
    assert [e.plan_id for e in state_store.environment_history("dev")] == ["p2", "p1"]
    assert state_store.environment_history("dev")[0] == environment("p2", "p1")


def test_promotion_built_from_an_older_plan_is_refused_naming_both_plans(state_store):
    state_store.promote_environment(environment("p1"), None)
    state_store.promote_environment(environment("p2", "p1"), "p1")
    with pytest.raises(StateConflictError) as caught:
        state_store.promote_environment(environment("p3", "p1"), "p1")
    message = "environment dev was promoted by plan p2 after this plan was built from plan p1: re-plan"
    assert message in str(caught.value)
    assert state_store.get_environment("dev").plan_id == "p2"
    assert [e.plan_id for e in state_store.environment_history("dev")] == ["p1"]


def test_first_promotion_conflicts_when_the_environment_appeared_meanwhile(state_store):
    state_store.promote_environment(environment("p1"), None)
    with pytest.raises(StateConflictError, match="promoted by plan p1 after this plan was built when dev did not"):
        state_store.promote_environment(environment("p2"), None)


def test_promotion_expecting_a_plan_conflicts_when_the_environment_is_gone(state_store):
    with pytest.raises(StateConflictError, match="environment dev was deleted after this plan was built from plan p0"):
        state_store.promote_environment(environment("p1", "p0"), "p0")
    assert state_store.get_environment("dev") is None


def test_promoting_the_same_plan_again_is_not_a_conflict(state_store):
    state_store.promote_environment(environment("p1"), None)
    state_store.promote_environment(environment("p2", "p1"), "p1")
    state_store.promote_environment(environment("p2", "p1"), "p1")
    assert state_store.get_environment("dev").plan_id == "p2"
    assert [e.plan_id for e in state_store.environment_history("dev")] == ["p1"]


def test_invalidate_sets_expiry_to_now(state_location):
    store = state_location.open(clock=lambda: NOW)
    try:
        store.promote_environment(environment("p1"), None)
        assert store.invalidate_environment("dev") is True
        assert store.get_environment("dev").expires_at == NOW
        assert store.get_environment("dev").plan_id == "p1"
        assert store.invalidate_environment("nope") is False
    finally:
        store.close()


def test_extend_moves_a_live_expiry_once_half_the_ttl_is_left(state_location):
    week = timedelta(days=7)
    store = state_location.open(clock=lambda: NOW)
    try:
        store.promote_environment(environment("p1").model_copy(update={"expires_at": NOW + timedelta(days=5)}), None)
        assert store.extend_environments(["dev"], week) == []  # more than half the TTL left: no write
        store.promote_environment(environment("p2").model_copy(update={"expires_at": NOW + timedelta(days=2)}), "p1")
        assert store.extend_environments(["dev", "nope"], week) == ["dev"]
        assert store.get_environment("dev").expires_at == NOW + week
        assert store.invalidate_environment("dev") is True
        assert store.extend_environments(["dev"], week) == []  # expired: the janitor's
        assert store.get_environment("dev").expires_at == NOW
        store.promote_environment(environment("q1", name="prod"), None)
        assert store.extend_environments(["prod"], week) == []  # never expires
    finally:
        store.close()


def test_delete_keeps_the_last_record_in_history(state_store):
    state_store.promote_environment(environment("p1"), None)
    assert state_store.delete_environment("dev") is True
    assert state_store.get_environment("dev") is None
    assert [e.plan_id for e in state_store.environment_history("dev")] == ["p1"]
    assert state_store.delete_environment("dev") is False
    state_store.promote_environment(environment("p2"), None)
    assert state_store.get_environment("dev").plan_id == "p2"


def _race(state_location, contenders: list[tuple[Environment, str | None]]) -> list[object]:
    """Promote each contender from its own thread and store, all released at once; return result or error."""
    stores = [state_location.open() for _ in contenders]
    barrier = threading.Barrier(len(contenders))
    results: list[object] = [None] * len(contenders)

    def promote(index: int) -> None:
        env, expected = contenders[index]
        barrier.wait()
        try:
            stores[index].promote_environment(env, expected)
            results[index] = "won"
        except StateConflictError as error:
            results[index] = error

    threads = [threading.Thread(target=promote, args=(i,)) for i in range(len(contenders))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        store.close()
    return results


@pytest.mark.parametrize("round_", range(3))
def test_racing_promotions_from_the_same_plan_exactly_one_wins(state_location, round_):
    store = state_location.open()
    store.promote_environment(environment("base"), None)
    results = _race(state_location, [(environment(f"p{i}", "base"), "base") for i in range(4)])
    winners = [i for i, result in enumerate(results) if result == "won"]
    assert len(winners) == 1
    assert all(isinstance(r, StateConflictError) for i, r in enumerate(results) if i != winners[0])
    assert all(f"promoted by plan p{winners[0]}" in str(r) for i, r in enumerate(results) if i != winners[0])
    assert store.get_environment("dev").plan_id == f"p{winners[0]}"
    assert [e.plan_id for e in store.environment_history("dev")] == ["base"]
    store.close()


@pytest.mark.parametrize("round_", range(3))
def test_racing_first_promotions_exactly_one_wins(state_location, round_):
    results = _race(state_location, [(environment(f"p{i}"), None) for i in range(4)])
    assert sum(result == "won" for result in results) == 1
    assert sum(isinstance(result, StateConflictError) for result in results) == 3
    store = state_location.open()
    winner = results.index("won")
    assert store.get_environment("dev").plan_id == f"p{winner}"
    assert store.environment_history("dev") == []
    store.close()


@pytest.mark.parametrize("base", [None, "base"])
def test_a_promotion_waiting_on_an_uncommitted_one_conflicts_once_it_commits(state_location, base):
    """Deterministic interleaving: B reads the environment while A's swap is written but not yet committed."""
    store = state_location.open()
    if base:
        store.promote_environment(environment(base), None)
    outcome: list[object] = []

    def promote_b() -> None:
        try:
            store.promote_environment(environment("b", base), base)
            outcome.append("won")
        except StateConflictError as error:
            outcome.append(error)

    with write_transaction(store.engine) as connection:
        environments.promote(connection, environment("a", base), base, NOW)
        contender = threading.Thread(target=promote_b)
        contender.start()
        contender.join(timeout=0.5)
        assert contender.is_alive(), "B must wait for A's transaction, not read around it"
    contender.join()
    assert len(outcome) == 1 and isinstance(outcome[0], StateConflictError)
    assert "promoted by plan a after this plan was built" in str(outcome[0])
    assert store.get_environment("dev").plan_id == "a"
    assert [e.plan_id for e in store.environment_history("dev")] == ([base] if base else [])
    store.close()
