"""Fixtures of the lifecycle suite: a fresh copy of the lifecycle project per test, under its own schema prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lifecycle.cli_actions import Lifecycle, close_lifecycle, open_lifecycle


@pytest.fixture
def lifecycle(tmp_path: Path, engine) -> Lifecycle:
    """The project in ``tmp_path/project``; every schema it (and its fresh builds) created is dropped afterwards."""
    opened = open_lifecycle(engine, tmp_path)
    yield opened
    close_lifecycle(opened)
