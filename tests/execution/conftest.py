import shutil
from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.state.store import open_state_store

PROJECTS = Path(__file__).parent / "projects"
EXECUTION_TIME = datetime(2024, 1, 6)



@pytest.fixture
def mini_project(tmp_path, clean_catalog) -> Path:
    target = tmp_path / "mini"
    shutil.copytree(PROJECTS / "mini", target)
    return target


@pytest.fixture
def make_context(engine):
    stores = []

    def make(
        project_dir: Path, environment: str = "prod", *, state_url: str | None = None, schema: str | None = None
    ) -> ExecutionContext:
        store = open_state_store(state_url, project_dir, schema=schema)
        stores.append(store)
        return ExecutionContext(
            project=load_project(project_dir),
            state=store,
            environment=environment,
            engine_factory=lambda: engine,
            clock=lambda: EXECUTION_TIME,
        )

    yield make
    for store in stores:
        store.close()
