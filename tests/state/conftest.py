"""Every state test runs twice: on a SQLite file in tmp_path and on PostgreSQL in a schema of its own."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from dagster_sparkmesh.state import StateStore, open_state_store

POSTGRES_URL = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"


@dataclass(frozen=True)
class StateLocation:
    """Where a test's state lives, so a test can open more stores (threads, processes) on the same state."""

    backend: str
    url: str | None
    project_path: Path
    schema: str | None

    def open(self, **options) -> StateStore:
        return open_state_store(self.url, self.project_path, schema=self.schema, **options)


@pytest.fixture(params=["sqlite", "postgres"])
def state_location(request, tmp_path: Path):
    if request.param == "sqlite":
        yield StateLocation("sqlite", None, tmp_path, None)
        return
    schema = f"state_test_{uuid.uuid4().hex[:12]}"
    yield StateLocation("postgres", POSTGRES_URL, tmp_path, schema)
    engine = sa.create_engine(POSTGRES_URL)
    with engine.begin() as connection:
        connection.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    engine.dispose()


@pytest.fixture
def state_store(state_location: StateLocation):
    store = state_location.open()
    yield store
    store.close()

