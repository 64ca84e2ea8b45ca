from __future__ import annotations

from datetime import datetime

from dagster_sparkmesh.snapshot.records import ChangeCategory, Snapshot, SnapshotId


def snapshot(name: str, fingerprint: str, created_day: int = 1, **fields) -> Snapshot:
    values = dict(
        name=name,
        fingerprint=fingerprint,
        metadata_hash=f"m{fingerprint}",
        version=f"v{fingerprint}",
        kind_name="incremental_by_time_range",
        model_json='{"name": "%s"}' % name,
        created_at=datetime(2024, 1, created_day, 8, 30, 15, 123456),
    )
    values.update(fields)
    return Snapshot(**values)


def test_snapshots_round_trip_whole(state_store):
    parent = snapshot("db.a", "f1")
    child = snapshot(
        "db.b",
        "f2",
        parents=(parent.id,),
        change_category=ChangeCategory.NON_BREAKING,
        previous_fingerprint="f0",
    )
    state_store.push_snapshots([parent, child])
    assert state_store.get_snapshots([child.id, parent.id, SnapshotId(name="db.x", fingerprint="f9")]) == {
        parent.id: parent,
        child.id: child,
    }
    assert state_store.all_snapshots() == [parent, child]


def test_push_is_idempotent_and_keeps_the_first_record(state_store):
    first = snapshot("db.a", "f1")
    state_store.push_snapshots([first])
    state_store.push_snapshots([first, snapshot("db.a", "f1", version="other"), snapshot("db.a", "f2")])
    assert state_store.get_snapshots([first.id])[first.id].version == "vf1"
    assert len(state_store.all_snapshots()) == 2


def test_push_again_with_the_same_version_keeps_the_latest_metadata(state_store):
    first = snapshot("db.a", "f1")
    state_store.push_snapshots([first])
    renamed = first.model_copy(update={"metadata_hash": "new metadata"})
    state_store.push_snapshots([renamed])
    assert state_store.get_snapshots([first.id])[first.id].metadata_hash == "new metadata"


def test_get_snapshots_by_name_oldest_first(state_store):
    newest, oldest, middle = snapshot("db.a", "f3", 3), snapshot("db.a", "f1", 1), snapshot("db.a", "f2", 2)
    state_store.push_snapshots([newest, oldest, middle, snapshot("db.b", "f4", 1)])
    assert state_store.get_snapshots_by_name(["db.a"]) == [oldest, middle, newest]
    assert [s.fingerprint for s in state_store.get_snapshots_by_name(["db.a", "db.b"])] == ["f1", "f4", "f2", "f3"]
    assert state_store.get_snapshots_by_name([]) == []


def test_many_snapshots_are_read_and_deleted_in_chunks(state_store):
    many = [snapshot(f"db.m{n}", f"f{n}") for n in range(1000)]
    state_store.push_snapshots(many)
    ids = [s.id for s in many]
    assert len(state_store.get_snapshots(ids)) == 1000
    assert len(state_store.get_snapshots_by_name(s.name for s in many)) == 1000
    state_store.delete_snapshots(ids[:900])
    assert sorted(s.name for s in state_store.all_snapshots()) == sorted(s.name for s in many[900:])


def test_delete_snapshots(state_store):
    keep, drop = snapshot("db.a", "f1"), snapshot("db.a", "f2")
    state_store.push_snapshots([keep, drop])
    state_store.delete_snapshots([drop.id, SnapshotId(name="db.none", fingerprint="x")])
    assert state_store.all_snapshots() == [keep]
