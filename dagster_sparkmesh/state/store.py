"""``StateStore``: the state of snapshots, intervals, environments and plan applications, on SQLAlchemy Core.

A thin facade: every method is one transaction that delegates to the module owning that table. Writes use
``write_transaction`` (all or nothing; serialized on SQLite by ``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
import sqlglot

from dagster_sparkmesh.clock import Clock, utc_now
from dagster_sparkmesh.errors import StateError
from dagster_sparkmesh.project.config import state_dir
from dagster_sparkmesh.snapshot import intervals as interval_math
from dagster_sparkmesh.snapshot.records import Environment, Interval, Snapshot, SnapshotId
from dagster_sparkmesh.state import (
    environments, interval_rows, leases, migrations, plan_log, plans, restatement_looks, snapshots, write_inputs,
    write_locks,
)
from dagster_sparkmesh.state.connection import (
    create_state_engine,
    ensure_schema,
    lock_for_migration,
    read_transaction,
    write_transaction,
)
from dagster_sparkmesh.state.plans import Restatement
from dagster_sparkmesh.state.records import LeaseHolder, PlanApplication, PromotionLease, StoredPlan, VersionStamp


def default_state_url(project_path: Path) -> str:
    return f"sqlite:///{(state_dir(project_path) / 'state.db').resolve()}"


def open_state_store(
    url: str | None, project_path: Path, *, schema: str | None = None, clock: Clock = utc_now
) -> StateStore:
    """Open (creating or migrating as needed) the state store at ``url``; None means the project's SQLite file.

    ``schema`` selects a PostgreSQL schema (created if missing), so several projects or tests can share a database.
    """
    engine = create_state_engine(url or default_state_url(Path(project_path)), schema)
    location = engine.url.render_as_string(hide_password=True)
    try:
        with write_transaction(engine) as connection:
            lock_for_migration(connection)
            ensure_schema(connection, schema)
            found = migrations.migrate(connection, clock(), location)
    except sa.exc.OperationalError as error:
        engine.dispose()
        raise StateError(
            f"cannot open the state store: {error.orig}",
            path=location,
            hint="check state_connection in config.yaml and that the database server is running",
        ) from error
    except BaseException:
        engine.dispose()
        raise
    return StateStore(engine, found, clock)


class StateStore:
    """Implements ``StateReader`` plus the writes. Open it with ``open_state_store``; ``close()`` when done."""

    def __init__(self, engine: sa.Engine, stamp_at_open: VersionStamp | None, clock: Clock) -> None:
        self._engine = engine
        self._stamp_at_open = stamp_at_open
        self._clock = clock

    @property
    def engine(self) -> sa.Engine:
        return self._engine

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> StateStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # versions

    def versions(self) -> VersionStamp:
        with read_transaction(self._engine) as connection:
            stamp = migrations.read_stamp(connection)
        if stamp is None:
            raise StateError("the state store has no version row", hint="was the _versions table emptied by hand?")
        return stamp

    def sqlglot_version_changed(self) -> bool:
        """Whether the stored fingerprints were computed by another sqlglot than this one (they may shift)."""
        return self._stamp_at_open is not None and self._stamp_at_open.sqlglot_version != sqlglot.__version__

    def stamp_sqlglot_version(self) -> None:
        """Record that the stored fingerprints now come from this sqlglot (call after re-fingerprinting)."""
        with write_transaction(self._engine) as connection:
            migrations.stamp_sqlglot_version(connection, self._clock())
        self._stamp_at_open = self.versions()

    # snapshots

    def push_snapshots(self, new: Iterable[Snapshot]) -> None:
        """Insert the snapshots not stored yet (existing ones are left as they are), in one transaction."""
        with write_transaction(self._engine) as connection:
            snapshots.push(connection, new)

    def get_snapshots(self, ids: Iterable[SnapshotId]) -> dict[SnapshotId, Snapshot]:
        with read_transaction(self._engine) as connection:
            return snapshots.get(connection, ids)

    def get_snapshots_by_name(self, names: Iterable[str]) -> list[Snapshot]:
        """Every stored snapshot of these models, oldest first."""
        with read_transaction(self._engine) as connection:
            return snapshots.get_by_name(connection, names)

    def all_snapshots(self) -> list[Snapshot]:
        with read_transaction(self._engine) as connection:
            return snapshots.get_all(connection)

    def delete_snapshots(self, ids: Iterable[SnapshotId]) -> None:
        with write_transaction(self._engine) as connection:
            snapshots.delete(connection, ids)

    # intervals

    def add_interval(self, name: str, version: str, interval: Interval) -> None:
        self.add_intervals(name, version, [interval])

    def add_intervals(self, name: str, version: str, intervals: Iterable[Interval]) -> None:
        """Record complete intervals (call only after their data is committed), all or none."""
        with write_transaction(self._engine) as connection:
            interval_rows.append(connection, name, version, intervals, self._clock())

    def get_intervals(self, name: str, version: str) -> list[Interval]:
        """Recorded intervals of (model, version), merged and sorted."""
        with read_transaction(self._engine) as connection:
            return interval_rows.read(connection, name, version)

    def remove_intervals(self, name: str, version: str, interval: Interval) -> None:
        """Forget ``interval`` (a restatement), splitting recorded intervals that straddle its bounds."""
        with write_transaction(self._engine) as connection:
            interval_rows.remove(connection, name, version, interval, self._clock())

    def compact_intervals(self, name: str, version: str) -> None:
        """Rewrite the rows of (model, version) as their merged form (reads are the same before and after)."""
        with write_transaction(self._engine) as connection:
            interval_rows.compact(connection, name, version, self._clock())

    def delete_intervals(self, name: str, version: str) -> None:
        """Forget every interval of (model, version), e.g. once the janitor dropped its physical table."""
        with write_transaction(self._engine) as connection:
            interval_rows.delete_version(connection, name, version)

    def missing_intervals(self, name: str, version: str, expected: list[Interval]) -> list[Interval]:
        """The expected (unit) intervals not entirely covered by recorded ones, in the order given."""
        expected = [interval_math.normalize(interval) for interval in expected]
        return interval_math.uncovered(self.get_intervals(name, version), expected)

    # environments

    def get_environment(self, name: str) -> Environment | None:
        with read_transaction(self._engine) as connection:
            return environments.get(connection, name)

    def list_environments(self) -> list[Environment]:
        with read_transaction(self._engine) as connection:
            return environments.list_all(connection)

    def promote_environment(
        self, environment: Environment, expected_plan_id: str | None, *, lease: PromotionLease | None = None
    ) -> None:
        """Swap the environment record if it still has ``expected_plan_id`` (None: must not exist yet).

        Raises ``StateConflictError`` naming both plans otherwise. The replaced record goes to the history.
        With ``lease``, the lease is given back in the same transaction, which fails if it is no longer held.
        """
        with write_transaction(self._engine) as connection:
            if lease is not None:
                leases.release_with_swap(connection, lease)
            environments.promote(connection, environment, expected_plan_id, self._clock())

    def environment_history(self, name: str) -> list[Environment]:
        """The records this environment had before its current one, newest first."""
        with read_transaction(self._engine) as connection:
            return environments.get_history(connection, name)

    # promotion leases

    def acquire_promotion_lease(
        self, environment: str, plan_id: str, holder: LeaseHolder | None = None
    ) -> PromotionLease:
        """Take the environment's promotion lease (see ``leases``); ``StateConflictError`` if someone holds it."""
        with write_transaction(self._engine) as connection:
            return leases.acquire(connection, environment, plan_id, holder or LeaseHolder.current(), self._clock())

    def renew_promotion_lease(self, lease: PromotionLease, *, views_touched: bool) -> PromotionLease:
        """Extend the lease; ``StateConflictError`` if another promotion took it over meanwhile."""
        with write_transaction(self._engine) as connection:
            return leases.renew(connection, lease, self._clock(), views_touched=views_touched)

    def release_promotion_lease(self, lease: PromotionLease) -> None:
        """Give the lease back after a failed promotion (a successful one releases it with the record swap)."""
        with write_transaction(self._engine) as connection:
            leases.release(connection, lease, self._clock())

    def get_promotion_lease(self, environment: str) -> PromotionLease | None:
        with read_transaction(self._engine) as connection:
            return leases.get(connection, environment)

    def delete_environment(self, name: str) -> bool:
        with write_transaction(self._engine) as connection:
            leases.delete_expired(connection, name, self._clock())
            return environments.delete(connection, name, self._clock())

    def invalidate_environment(self, name: str) -> bool:
        with write_transaction(self._engine) as connection:
            return environments.invalidate(connection, name, self._clock())

    def extend_environments(self, names: Iterable[str], ttl: timedelta) -> list[str]:
        """Keep live environments from expiring (a branch environment lives while its branch does), in one
        transaction; the ones whose expiry moved (see ``environments.extend``)."""
        with write_transaction(self._engine) as connection:
            now = self._clock()
            return [name for name in names if environments.extend(connection, name, ttl, now)]

    # table write locks

    @contextmanager
    def table_write_lock(self, table_name: str, *, poll_seconds: float = 0.2) -> Iterator[None]:
        """Hold ``table_name``'s write lock (see ``write_locks``) for the block: wait while a live writer holds it,
        renew it while the block runs, give it back after."""
        holder = LeaseHolder.current()
        while True:
            with write_transaction(self._engine) as connection:
                token = write_locks.try_acquire(connection, table_name, holder, self._clock())
            if token is not None:
                break
            time.sleep(poll_seconds)
        stop = threading.Event()
        renewer = threading.Thread(
            target=self._renew_write_lock, args=(table_name, token, stop), name="sparkmesh-write-lock", daemon=True
        )
        renewer.start()
        try:
            yield
        finally:
            stop.set()
            renewer.join()
            with write_transaction(self._engine) as connection:
                write_locks.release(connection, table_name, token)

    def _renew_write_lock(self, table_name: str, token: str, stop: threading.Event) -> None:
        while not stop.wait(write_locks.WRITE_LOCK_DURATION.total_seconds() / 5):
            with write_transaction(self._engine) as connection:
                if not write_locks.renew(connection, table_name, token, self._clock()):
                    return

    def table_write_lock_holder(self, table_name: str) -> LeaseHolder | None:
        with read_transaction(self._engine) as connection:
            return write_locks.holder_of(connection, table_name)

    # what FULL writes read

    def write_inputs_digest(self, table_name: str) -> str | None:
        """The digest ``record_write_inputs`` recorded for the table's last write (``state.write_inputs``)."""
        with read_transaction(self._engine) as connection:
            return write_inputs.digest_of(connection, table_name)

    def record_write_inputs(self, table_name: str, digest: str | None) -> None:
        with write_transaction(self._engine) as connection:
            write_inputs.record(connection, table_name, digest, self._clock())

    # scheduled restatements

    def restatement_looks(self, versions: Iterable[tuple[str, str]]) -> dict[tuple[str, str], datetime]:
        """(model, version) → when a run of prod last looked for its scheduled restatement (``state.restatement_looks``)."""
        with read_transaction(self._engine) as connection:
            return restatement_looks.looks(connection, versions)

    def record_restatement_looks(self, versions: Iterable[tuple[str, str]], looked_at: datetime) -> None:
        with write_transaction(self._engine) as connection:
            restatement_looks.record(connection, versions, looked_at)

    # stored plans

    def save_plan(self, plan_id: str, environment: str, plan_json: str) -> bool:
        """Store a plan under its id (a plan already stored under it stays); True if this call stored it."""
        with write_transaction(self._engine) as connection:
            return plans.save(connection, plan_id, environment, plan_json, self._clock())

    def get_plan(self, plan_id: str) -> StoredPlan | None:
        with read_transaction(self._engine) as connection:
            return plans.get(connection, plan_id)

    def latest_plan(self, environment: str) -> StoredPlan | None:
        with read_transaction(self._engine) as connection:
            return plans.latest(connection, environment)

    def prepare_plan(
        self, plan_id: str, new_snapshots: Iterable[Snapshot], restatements: Iterable[Restatement]
    ) -> bool:
        """Push the plan's snapshots and remove its restated intervals once per plan, in one transaction; True
        if this call did it (False: done before, by this or another process)."""
        with write_transaction(self._engine) as connection:
            return plans.prepare(connection, plan_id, new_snapshots, restatements, self._clock())

    def delete_plans(self, created_before: datetime, keep: Iterable[str]) -> int:
        with write_transaction(self._engine) as connection:
            return plans.delete_older_than(connection, created_before, keep)

    # plan applications

    def record_plan_start(self, plan_id: str, environment: str, user: str, host: str, summary_json: str) -> None:
        with write_transaction(self._engine) as connection:
            plan_log.start(connection, plan_id, environment, user, host, summary_json, self._clock())

    def record_plan_end(self, plan_id: str, outcome: str, metrics_json: str) -> None:
        with write_transaction(self._engine) as connection:
            plan_log.end(connection, plan_id, outcome, metrics_json, self._clock())

    def list_plan_applications(self) -> list[PlanApplication]:
        """Every application attempt, oldest first."""
        with read_transaction(self._engine) as connection:
            return plan_log.list_all(connection)
