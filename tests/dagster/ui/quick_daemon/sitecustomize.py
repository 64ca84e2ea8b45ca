"""Imported at start-up by every Python process of the browser test's ``dagster dev`` (this folder is put first on
its ``PYTHONPATH``): Dagster's backfill daemon then looks for work every 3 s instead of every 30.

Dagster has no setting for that interval, and an asset backfill advances one layer of the graph per tick: the
test's "Materialize all" (seeds, views, daily models, promotion) waited about two minutes for ticks alone. The
backfill logic is Dagster's own; only the sleep between ticks is shorter (also for a daemon that falls back to
Dagster's default interval; sensors, the run queue and run monitoring keep their own). The constant is set right
after Dagster's module defines it (the backfill loop reads it when it starts), so processes that never import the
daemon pay nothing. This file hides any other ``sitecustomize`` for those processes; the project's virtualenv has
none.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

TARGET = "dagster._daemon.controller"
SECONDS = 3


class _ShortDaemonInterval(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        define = spec.loader.exec_module

        def exec_module(module):
            define(module)
            module.DEFAULT_DAEMON_INTERVAL_SECONDS = SECONDS

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _ShortDaemonInterval())
