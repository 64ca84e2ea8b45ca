"""The known failure of virtual updates racing the physical layer cannot happen here.

Many new models (tables and views) built with parallel workers, one of them failing: no view of the
environment may be created, and when the plan finally succeeds, every view is created only after the
physical table it points at exists in the catalog.
"""

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ExecutionError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from tests.execution.test_apply import END, START

LAYERS = 3
WIDTH = 4


def _write_project(root: Path, *, broken: str | None = None) -> None:
    models = root / "models"
    models.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: 2024-01-01\n")
    (models / "source.sql").write_text(
        "MODEL (name wide.source, kind FULL);\n"
        "SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-05', INTERVAL 1 DAY)) AS ds, 1 AS v"
    )
    for layer in range(LAYERS):
        for index in range(WIDTH):
            name = f"m_{layer}_{index}"
            parent = "wide.source" if layer == 0 else f"wide.m_{layer - 1}_{(index + 1) % WIDTH}"
            kind = "VIEW" if index % 2 else "FULL"
            expression = "v + 1" if name != broken else "v + no_such_column"
            (models / f"{name}.sql").write_text(
                f"MODEL (name wide.{name}, kind {kind});\nSELECT ds, {expression} AS v FROM {parent}"
            )


@pytest.fixture
def wide_project(tmp_path, clean_catalog) -> Path:
    return tmp_path / "wide"


def test_failed_backfill_creates_no_view_and_success_creates_views_after_tables(spark, engine, wide_project, make_context):
    _write_project(wide_project, broken="m_2_1")
    ctx = make_context(wide_project)
    ctx.max_workers = 4
    with pytest.raises(ExecutionError):
        apply_plan(ctx, plan_for(ctx, START, END))
    assert not spark.catalog.databaseExists("wide"), "no environment view may exist after a failed backfill"
    assert ctx.state.get_environment("prod") is None

    _write_project(wide_project)
    ctx = make_context(wide_project)
    ctx.max_workers = 4
    created_before_target: list[str] = []
    original = engine.catalog.create_or_alter_view

    def checked_view(view: str, select_sql: str, **options) -> None:
        if view.startswith("wide."):
            target = select_sql.split("FROM", 1)[1].strip().replace("`", "")
            if not (engine.catalog.table_exists(target) or engine.catalog.view_exists(target)):
                created_before_target.append(view)
        original(view, select_sql, **options)

    engine.catalog.create_or_alter_view = checked_view
    try:
        apply_plan(ctx, plan_for(ctx, START, END))
    finally:
        del engine.catalog.create_or_alter_view
    assert created_before_target == []
    views = {row[1] for row in spark.sql("SHOW VIEWS IN wide").collect() if not row[2]}  # not temp views
    assert len(views) == LAYERS * WIDTH + 1
    for view in views:
        assert spark.sql(f"SELECT COUNT(*) FROM wide.{view}").collect()[0][0] == 5
