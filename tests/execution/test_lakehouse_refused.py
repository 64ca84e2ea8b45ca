"""A project whose models ask for Iceberg tables, run on a session that does not serve Iceberg (a server of the
user's own without its catalog): refused before anything is written, saying what to do."""

from datetime import datetime

import pytest

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for


def test_a_session_without_the_format_writes_nothing(spark, tmp_path, make_context, clean_catalog):
    project = tmp_path / "iceberg_project"
    (project / "models").mkdir(parents=True)
    (project / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  table_format: iceberg\n")
    (project / "models" / "full.sql").write_text("MODEL (name ice.full, kind FULL);\nSELECT 1 AS x")
    ctx = make_context(project)

    with pytest.raises(ExecutionError, match="ice.full: this Spark session does not serve iceberg tables"):
        apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 3)))

    assert [row for row in spark.sql("SHOW TABLES IN sparkmesh__ice").collect() if not row.isTemporary] == []
    assert ctx.state.get_environment("prod") is None  # nothing promoted
