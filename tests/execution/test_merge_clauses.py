"""A unique-key model with SQLMesh's ``when_matched`` and ``merge_filter``, through plan and apply on Spark: the first
run loads its rows (as SQLMesh's first insert), the next one merges through the clauses, with the filter's macros
rendered for that run's interval. Spark's own MERGE INTO is the referee of the merge itself
(``tests/lakehouse/test_merge_clauses.py``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.state.store import open_state_store


MODEL = """MODEL (
  name mc.latest,
  kind INCREMENTAL_BY_UNIQUE_KEY (
    unique_key id,
    when_matched (
      WHEN MATCHED AND source.amount < 0 THEN DELETE
      WHEN MATCHED AND source.seen_at > target.seen_at THEN UPDATE SET
        target.amount = source.amount,
        target.seen_at = source.seen_at
    ),
    merge_filter target.seen_at >= @start_ds - INTERVAL 1 DAY
  ),
  start '2024-01-01'
);

SELECT id, name, amount, seen_at FROM mc_src.events WHERE seen_at BETWEEN @start_ds AND @end_ds
"""


def _apply(project_dir: Path, engine, end: datetime) -> None:
    project = load_project(project_dir, use_cache=False)
    store = open_state_store(None, project_dir)
    try:
        ctx = ExecutionContext(project=project, state=store, environment="prod", engine_factory=lambda: engine,
                               clock=lambda: end)
        apply_plan(ctx, plan_for(ctx, None, end))
    finally:
        store.close()


def test_the_second_run_merges_through_the_clauses_and_the_rendered_filter(spark, tmp_path, engine, clean_catalog):
    project_dir = tmp_path / "merges"
    (project_dir / "models").mkdir(parents=True)
    (project_dir / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (project_dir / "external_models.yaml").write_text(
        "- name: mc_src.events\n  columns: {id: int, name: string, amount: int, seen_at: date}\n")
    (project_dir / "models" / "latest.sql").write_text(MODEL)
    spark.sql("CREATE DATABASE IF NOT EXISTS mc_src")
    spark.sql("CREATE TABLE mc_src.events (id INT, name STRING, amount INT, seen_at DATE) USING parquet")
    spark.sql("INSERT INTO mc_src.events VALUES (1, 'a', 10, DATE'2024-01-01'), (2, 'b', 20, DATE'2024-01-01'), "
              "(3, 'c', 30, DATE'2024-01-01'), (4, 'd', 40, DATE'2023-12-31')")
    _apply(project_dir, engine, datetime(2024, 1, 2))
    # The 2nd: 1 changes (newer: updated, its name kept), 2 is withdrawn (deleted), 5 is new.
    spark.sql("INSERT INTO mc_src.events VALUES (1, 'a2', 11, DATE'2024-01-02'), (2, 'b', -1, DATE'2024-01-02'), "
              "(5, 'e', 50, DATE'2024-01-02')")
    _apply(project_dir, engine, datetime(2024, 1, 3))
    # The 3rd: the filter is now "held since the 2nd": 1 matches and is updated; 3's held row (the 1st) does not
    # match, so its new row is added beside it, as MERGE INTO does with the filter in its ON.
    spark.sql("INSERT INTO mc_src.events VALUES (1, 'a3', 12, DATE'2024-01-03'), (3, 'c3', 33, DATE'2024-01-03')")
    _apply(project_dir, engine, datetime(2024, 1, 4))
    rows = spark.sql("SELECT id, name, amount, CAST(seen_at AS STRING) FROM mc.latest ORDER BY id, seen_at").collect()
    assert [tuple(row) for row in rows] == [
        (1, "a", 12, "2024-01-03"), (3, "c", 30, "2024-01-01"), (3, "c3", 33, "2024-01-03"), (5, "e", 50, "2024-01-02"),
    ]


def test_a_merge_filter_that_renders_to_nothing_is_a_clear_error(spark, tmp_path, engine, clean_catalog):
    project_dir = tmp_path / "empty_filter"
    (project_dir / "models").mkdir(parents=True)
    (project_dir / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (project_dir / "models" / "keyed.sql").write_text(
        "MODEL (name mc.keyed, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id,\n"
        "  merge_filter @IF(@start_ds > '2030-01-01', target.id > 0)), start '2024-01-01');\n"
        "SELECT 1 AS id, CAST(@start_ds AS DATE) AS ds\n")
    _apply(project_dir, engine, datetime(2024, 1, 2))  # the first load merges nothing
    with pytest.raises(SparkMeshError) as caught:
        _apply(project_dir, engine, datetime(2024, 1, 3))
    assert "merge_filter of model mc.keyed rendered to 0 conditions" in str(caught.value)
    assert "keyed.sql" in str(caught.value)
