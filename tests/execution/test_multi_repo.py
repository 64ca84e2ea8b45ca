"""A multi-repo project (``sparkmesh -p repo_1 -p repo_2``): one DAG across folders, each read with its own config;
loaded, planned and applied on Spark, and through the CLI's repeated ``-p``."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from click.testing import CliRunner

from dagster_sparkmesh.cli import main
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.state.store import open_state_store


def _repos(root: Path) -> tuple[Path, Path]:
    first, second = root / "repo_1", root / "repo_2"
    for repo, start in ((first, "2024-01-01"), (second, "2024-01-02")):
        (repo / "models").mkdir(parents=True)
        (repo / "config.yaml").write_text(f"model_defaults:\n  dialect: spark\n  start: '{start}'\n")
    (first / "models" / "events.sql").write_text(
        "MODEL (name repo1.events, kind FULL);\n"
        "SELECT id, id * 10 AS amount FROM (SELECT explode(sequence(1, 4)) AS id) AS t"
    )
    (second / "models" / "totals.sql").write_text(
        "MODEL (name repo2.totals, kind FULL);\nSELECT SUM(amount) AS total FROM repo1.events"
    )
    return first, second


def test_two_repositories_are_one_dag(spark, tmp_path, engine, clean_catalog):
    first, second = _repos(tmp_path)
    project = load_project(first, use_cache=False, more_paths=[second])
    assert list(project.models) == ["repo1.events", "repo2.totals"]
    assert project.models["repo2.totals"].depends_on == {"repo1.events"}
    assert project.models["repo2.totals"].start == "2024-01-02"  # its own repository's defaults
    store = open_state_store(None, first)
    try:
        ctx = ExecutionContext(project=project, state=store, environment="prod", engine_factory=lambda: engine,
                               clock=lambda: datetime(2024, 1, 5))
        apply_plan(ctx, plan_for(ctx, None, datetime(2024, 1, 4)))
    finally:
        store.close()
    assert spark.sql("SELECT total FROM repo2.totals").collect()[0][0] == 100

    result = CliRunner().invoke(main, ["-p", str(first), "-p", str(second), "info", "--json"])
    assert result.exit_code == 0, result.output
    assert "repo2.totals" in json.dumps(json.loads(result.output))
    alone = CliRunner().invoke(main, ["-p", str(second), "info"])
    # Without repo_1, its table is read but declared nowhere: an external model with a warning, as in SQLMesh.
    assert alone.exit_code == 0 and "repo1.events" in alone.output, alone.output
