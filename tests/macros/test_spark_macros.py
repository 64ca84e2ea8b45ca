"""A project using SQLMesh macros everywhere plans and applies on Spark, interval by interval."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path


from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.state.store import open_state_store

FIXTURE = Path(__file__).parent / "projects" / "spark_macros"
START, END = datetime(2024, 1, 1), datetime(2024, 1, 6)


def test_a_macro_project_runs_on_spark(tmp_path: Path, spark, engine, clean_catalog) -> None:
    project = tmp_path / "spark_macros"
    shutil.copytree(FIXTURE, project)
    loaded = load_project(project)
    assert loaded.models["mac_shop.daily"].owner == "analytics"
    store = open_state_store(None, project)
    try:
        ctx = ExecutionContext(project=loaded, state=store, environment="prod", engine_factory=lambda: engine, clock=lambda: END)
        apply_plan(ctx, plan_for(ctx, START, END))
    finally:
        store.close()
    rows = sorted(tuple(row) for row in spark.sql("SELECT ds, amount_a, amount_b, half, phase FROM mac_shop.daily").collect())
    # ids 1..4 a day: category a = ids 2, 4 (60), b = ids 1, 3 (40); half = 100 / 2
    assert rows == [
        (f"2024-01-0{day}", 60, 40, 50.0, "early" if day < 3 else "late") for day in range(1, 6)
    ]
    keys = spark.sql("SELECT COUNT(DISTINCT key) FROM mac_shop.daily").collect()[0][0]
    assert keys == 5
