"""Turns for models that change Spark session settings (``session_properties``).

A Spark session's SQL settings are one set for every thread that uses the session, and the scheduler runs several
models at once on it: a model's ``spark.sql.ansi.enabled = false`` would also apply to the query another model runs
meanwhile (a cast that must fail there returns NULL), and two models restoring the same key in the wrong order would
leave one's value set for good. So a model with settings runs alone: it waits for the models running to finish, and
none starts until it has restored the settings. Models without settings run side by side as before.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

_TURNS: weakref.WeakKeyDictionary[object, SettingsTurns] = weakref.WeakKeyDictionary()
_TURNS_LOCK = threading.Lock()


class SettingsTurns:
    """Shared turns for work under the session's settings, a turn alone for work that changes them; a waiting
    turn alone goes before shared turns asked after it (a stream of models cannot hold it off)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._sharing = 0
        self._alone = False
        self._waiting_alone = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: not self._alone and not self._waiting_alone)
            self._sharing += 1
        try:
            yield
        finally:
            with self._changed:
                self._sharing -= 1
                self._changed.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        with self._changed:
            self._waiting_alone += 1
            try:
                self._changed.wait_for(lambda: not self._alone and self._sharing == 0)
            finally:
                self._waiting_alone -= 1
                self._changed.notify_all()
            self._alone = True
        try:
            yield
        finally:
            with self._changed:
                self._alone = False
                self._changed.notify_all()


def turns_of(session: object) -> SettingsTurns:
    """The turns of one Spark session, whichever engine or context uses it."""
    with _TURNS_LOCK:
        turns = _TURNS.get(session)
        if turns is None:
            turns = _TURNS[session] = SettingsTurns()
        return turns
