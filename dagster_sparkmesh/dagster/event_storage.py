"""A SQLite event log that stores a batch of Dagster events in two transactions instead of two per event.

Why: a ranged run of N daily partitions makes Dagster log N "materialization planned" events when the run is
created and N materializations when its step ends. The stock ``SqliteEventLogStorage`` stores each one in a
transaction of its own (a new SQLAlchemy engine, a commit to the run's database, another to the index database),
and its ``store_event_batch`` just loops: 10-40 ms per event, 7-20 s for 365 partitions of a run doing nothing.
Dagster already hands such events over in batches when ``DAGSTER_EVENT_BATCH_SIZE`` is set (it reads the
variable at every event, in the process that logs it: the webserver or daemon that creates a run, the run
worker and step processes); this storage sets it to ``EVENT_BATCH_SIZE`` in every process that loads it, unless
it is set already (``0`` turns batching off).

``store_event_batch`` keeps the stock store's result, row for row: each consecutive stretch of events of one run
whose types Dagster batches (``BATCH_WRITABLE_EVENTS``: planned and reported materializations, observations,
failed materializations, planned asset checks) becomes one multi-row insert into the run's database, then one
transaction on the index database that mirrors the events in order (same row ids), stores the asset tags once,
writes each asset key's row once (the values the last event of each kind would leave), and records planned
asset checks through Dagster's own code (its index connection is this transaction). Any other event in a batch
(run status, step, engine, check evaluation, log message) goes through the stock ``store_event`` in its place in
the order. If the index transaction fails (it rolls back), the stretch is mirrored event by event instead; if the
run-database insert fails, the stretch is stored by the stock path. Watchers are unchanged: they follow the run's
database file and read every record after their cursor; in-process subscribers are called by the instance.

It uses private helpers of Dagster's SQL event log (``_event_to_row``, ``_get_asset_entry_values``,
``_store_asset_event_tags``...), so it is pinned to ``SUPPORTED_DAGSTER`` (the range dagster-sparkmesh requires).
Outside it the constructor warns and the storage behaves exactly like the stock one (one event at a time).
tests/dagster/test_batched_event_storage.py runs the same ranged runs on both stores and compares them.

To use it, give the instance's ``dagster.yaml`` the ``event_log_storage`` of ``batched_instance_yaml(base_dir)``
(``base_dir`` = ``$DAGSTER_HOME/history/runs``: the stock layout, so existing history stays readable).
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import dagster
import yaml
from dagster._core.errors import DagsterInvariantViolationError
from dagster._core.events import ASSET_CHECK_EVENTS, ASSET_EVENTS, BATCH_WRITABLE_EVENTS
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.schema import AssetKeyTable
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster._serdes import ConfigurableClassData
from packaging.version import InvalidVersion, Version
from sqlalchemy import exc as db_exc
from sqlalchemy.engine import Connection

SUPPORTED_DAGSTER = (Version("1.13"), Version("1.14"))  # >= 1.13, < 1.14
BATCH_SIZE_ENV = "DAGSTER_EVENT_BATCH_SIZE"
EVENT_BATCH_SIZE = 1000  # a 365-day range: one batch of planned events, one of materializations
_ROWS_PER_INSERT = 500  # 7 bound values per row: far below SQLite's 32,766 variables per statement


def dagster_version_supported(version: str = dagster.__version__) -> bool:
    try:
        return SUPPORTED_DAGSTER[0] <= Version(version) < SUPPORTED_DAGSTER[1]
    except InvalidVersion:  # a development build ("1!0+dev"): its helpers may differ
        return False


def event_log_storage_config(base_dir: str) -> dict[str, Any]:
    """The ``event_log_storage`` entry of a ``dagster.yaml`` that selects this storage."""
    return {
        "module": __name__,
        "class": BatchedSqliteEventLogStorage.__name__,
        "config": {"base_dir": os.fspath(base_dir)},
    }


def batched_instance_yaml(base_dir: str) -> str:
    """A ``dagster.yaml`` snippet: ``base_dir`` is where the run databases live (``$DAGSTER_HOME/history/runs``)."""
    return yaml.safe_dump({"event_log_storage": event_log_storage_config(base_dir)}, sort_keys=False)


class BatchedSqliteEventLogStorage(SqliteEventLogStorage):
    """``SqliteEventLogStorage`` whose ``store_event_batch`` writes a batch in two transactions (module doc)."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self._batch = threading.local()  # .conn: the index transaction of a batch being stored by this thread
        super().__init__(base_dir, inst_data=inst_data)
        self._batching = dagster_version_supported()
        if not self._batching:
            warnings.warn(
                f"{type(self).__name__} supports dagster >={SUPPORTED_DAGSTER[0]},<{SUPPORTED_DAGSTER[1]}, not "
                f"{dagster.__version__}: it stores events one at a time, as the stock SqliteEventLogStorage does",
                stacklevel=2,
            )
        else:
            os.environ.setdefault(BATCH_SIZE_ENV, str(EVENT_BATCH_SIZE))

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None, config_value: Any):  # type: ignore[override]
        return cls(inst_data=inst_data, **config_value)

    def index_connection(self) -> Any:
        # Inside a batch, Dagster's helpers that open their own index connection (asset checks) join the batch's
        # transaction: the stock one would wait for the lock this thread holds.
        conn = getattr(self._batch, "conn", None)
        return contextlib.nullcontext(conn) if conn is not None else super().index_connection()

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        if not self._batching:
            super().store_event_batch(events)  # the stock loop
            return
        stretch: list[EventLogEntry] = []
        for event in events:
            if _batchable(event) and (not stretch or stretch[0].run_id == event.run_id):
                stretch.append(event)
                continue
            self._store_stretch(stretch)
            stretch = []
            if _batchable(event):
                stretch.append(event)
            else:
                self.store_event(event)
        self._store_stretch(stretch)

    def _store_stretch(self, events: list[EventLogEntry]) -> None:
        if len(events) <= 1:
            for event in events:
                self.store_event(event)
            return
        try:
            with self.run_connection(events[0].run_id) as conn:
                for chunk in _chunks(events, _ROWS_PER_INSERT):
                    conn.execute(self.prepare_insert_event_batch(chunk))
        except Exception as error:  # rolled back: nothing of the stretch is stored yet
            _warn_fallback("the run database", error)
            for event in events:
                self.store_event(event)
            return
        try:
            self._mirror_in_index(events)
        except Exception as error:  # rolled back: the stretch is in the run database only
            _warn_fallback("the index database", error)
            for event in events:
                self._mirror_in_index([event])

    def _mirror_in_index(self, events: Sequence[EventLogEntry]) -> None:
        """What the stock ``store_event`` does on the index database for these events, in one transaction."""
        with self.index_transaction() as conn, self._joined(conn):
            has_index_cols = self._has_asset_key_index_cols_on_connection(conn)
            asset_events: list[EventLogEntry] = []
            asset_event_ids: list[int] = []
            entries: dict[str, dict[str, Any]] = {}  # asset key -> the values its last events would leave
            for event in events:
                event_id = conn.execute(self.prepare_insert_event(event)).inserted_primary_key[0]
                if event_id is None:
                    raise DagsterInvariantViolationError("Cannot store asset event tags for null event id.")
                event_type = event.dagster_event_type
                if event_type in ASSET_EVENTS:
                    asset_events.append(event)
                    asset_event_ids.append(event_id)
                    asset_key = event.get_dagster_event().asset_key
                    if asset_key:
                        values = self._get_asset_entry_values(event, event_id, has_index_cols)
                        if values:
                            entries.setdefault(asset_key.to_string(), {}).update(values)
                if event_type in ASSET_CHECK_EVENTS:
                    self.store_asset_check_event(event, event_id)
            self._store_asset_event_tags(conn, asset_events, asset_event_ids)
            for asset_key, values in entries.items():
                _upsert_asset_key(conn, asset_key, values)

    @contextlib.contextmanager
    def _joined(self, conn: Connection) -> Iterator[None]:
        self._batch.conn = conn
        try:
            yield
        finally:
            self._batch.conn = None


def _batchable(event: EventLogEntry) -> bool:
    return event.is_dagster_event and event.dagster_event_type in BATCH_WRITABLE_EVENTS


def _upsert_asset_key(conn: Connection, asset_key: str, values: dict[str, Any]) -> None:
    """``SqlEventLogStorage._store_asset_event``'s insert-or-update of one asset key row."""
    try:  # SQLite undoes the failed statement only: the transaction goes on, as in the stock code
        conn.execute(AssetKeyTable.insert().values(asset_key=asset_key, **values))
    except db_exc.IntegrityError:
        conn.execute(AssetKeyTable.update().values(**values).where(AssetKeyTable.c.asset_key == asset_key))


def _chunks(events: list[EventLogEntry], size: int) -> Iterator[list[EventLogEntry]]:
    for start in range(0, len(events), size):
        yield events[start : start + size]


def _warn_fallback(where: str, error: Exception) -> None:
    warnings.warn(f"storing a batch of Dagster events in {where} failed ({error}); storing them one by one")
