"""Turns on one Spark session: work that changes its settings runs alone, other work side by side."""

import threading
import time

from dagster_sparkmesh.engine.settings_turns import SettingsTurns, turns_of


def _record(turns: SettingsTurns, kind: str, name: str, log: list, hold: float) -> None:
    with getattr(turns, kind)():
        log.append(("in", name))
        time.sleep(hold)
        log.append(("out", name))


def _run(*workers: tuple[str, str, float, float]) -> list:
    turns, log = SettingsTurns(), []
    threads = []
    for kind, name, delay, hold in workers:
        def work(kind=kind, name=name, delay=delay, hold=hold):
            time.sleep(delay)
            _record(turns, kind, name, log, hold)
        threads.append(threading.Thread(target=work))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    return log


def test_shared_turns_overlap():
    log = _run(("shared", "a", 0, 0.3), ("shared", "b", 0.05, 0.3))
    assert log[:2] == [("in", "a"), ("in", "b")]


def test_a_turn_alone_waits_for_the_shared_ones_and_holds_off_later_ones():
    log = _run(("shared", "a", 0, 0.3), ("alone", "settings", 0.05, 0.2), ("shared", "late", 0.1, 0.1))
    assert log == [("in", "a"), ("out", "a"), ("in", "settings"), ("out", "settings"), ("in", "late"), ("out", "late")]


def test_one_session_has_one_set_of_turns():
    class Session:
        """Any object a weak reference can hold, as a Spark session."""

    first, second = Session(), Session()
    assert turns_of(first) is turns_of(first)
    assert turns_of(first) is not turns_of(second)
