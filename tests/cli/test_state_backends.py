"""``plans``, ``rollback`` and ``check-intervals`` through click, with the state on SQLite and on PostgreSQL.

The project's ``config.yaml`` names the state store, as a user would write it; the PostgreSQL variant gets a
database of its own (dropped afterwards), so it never sees another test's environments.
"""

from __future__ import annotations

import importlib.util
import re
import uuid
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.state.store import open_state_store

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke

SERVER_URL = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"
WINDOW = ["--start", "2024-01-01", "--end", "2024-01-03"]


@pytest.fixture(params=["sqlite", "postgres"])
def project(request, tmp_path: Path):
    """The tiny project; for postgres its config.yaml points at a fresh database."""
    project = harness.write_tiny_project(tmp_path / "tiny")
    if request.param == "sqlite":
        yield project, None
        return
    database = f"sparkmesh_cli_{uuid.uuid4().hex[:10]}"
    server = sa.create_engine(SERVER_URL, isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.exec_driver_sql(f'CREATE DATABASE "{database}"')
    url = f"postgresql+psycopg2://postgres@127.0.0.1:5432/{database}"
    with open(project / "config.yaml", "a") as config:
        config.write(f"state_connection:\n  type: postgres\n  url: {url}\n")
    try:
        yield project, url
    finally:
        with server.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        server.dispose()


def _run(project: Path, engine, *args: str, exit_code: int = 0) -> str:
    result, _ = invoke(project, list(args), engine)
    assert result.exit_code == exit_code, result.output
    return result.output


def _prod_total(engine) -> int:
    return engine.catalog.query_rows("SELECT SUM(total) FROM shop.daily")[0][0]


def test_plan_log_rollback_and_check_intervals(project, engine, clean_catalog):
    folder, url = project
    _run(folder, engine, "plan", "prod", "--auto-apply", *WINDOW)
    daily = folder / "models" / "daily.sql"
    daily.write_text(daily.read_text().replace("SUM(amount) AS total", "SUM(amount) * 2 AS total"))
    _run(folder, engine, "plan", "prod", "--auto-apply", *WINDOW)
    assert _prod_total(engine) == 360

    complete = _run(folder, None, "check-intervals", "prod", "--execution-time", "2024-01-10")
    assert "prod: every interval is complete" in complete

    rolled = _run(folder, engine, "rollback", "prod")
    assert "Rolled `prod` back to plan" in rolled and "alter shop.daily" in rolled
    assert _prod_total(engine) == 180

    log = _run(folder, None, "plans")
    assert log.count("succeeded") == 3
    assert re.search(r"succeeded\s+[│|]\s+1 views", log), log  # the rollback changed one view, computed nothing

    with open_state_store(url, folder) as state:
        assert len(state.list_plan_applications()) == 3
        version = next(s.version for s in state.get_environment("prod").snapshots if s.name == "shop.daily")
        state.remove_intervals("shop.daily", version, Interval(start=datetime(2024, 1, 2), end=datetime(2024, 1, 3)))
    missing = _run(folder, None, "check-intervals", "prod", "--execution-time", "2024-01-10")
    assert "shop.daily: 1 missing" in missing and "2024-01-02 00:00 - 2024-01-03 00:00" in missing
    # The state lives where config.yaml says: no SQLite file appears next to a PostgreSQL project.
    assert (folder / ".sparkmesh" / "state.db").exists() == (url is None)
