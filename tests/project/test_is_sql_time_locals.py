"""``evaluator.locals`` in an ``is_sql`` function (SQLMesh's sushi ``waiters.py``): a Python macro it calls reads
``evaluator.locals["start_date"]`` while the project loads. sparkmesh writes the query once, so each time value
stands for its macro variable and is rendered per interval, as SQLMesh renders the function per interval."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.rendering import render_query


def _project(root: Path) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "macros").mkdir()
    (root / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (root / "macros" / "__init__.py").write_text("")
    (root / "macros" / "by_ds.py").write_text(
        "from sqlmesh import macro\n"
        "@macro()\n"
        "def incremental_by_ds(evaluator, column):\n"
        "    return column.between(evaluator.locals['start_date'], evaluator.locals['end_date'])\n"
    )
    (root / "models" / "orders.sql").write_text(
        "MODEL (name s.orders, kind FULL);\nSELECT 1 AS id, CAST('2024-01-01' AS DATE) AS event_date\n"
    )
    (root / "models" / "waiters.py").write_text(
        "from macros.by_ds import incremental_by_ds\n"
        "from sqlglot import exp\n"
        "from sqlmesh import model\n"
        "@model('s.waiters', is_sql=True, kind='FULL')\n"
        "def entrypoint(evaluator):\n"
        "    return exp.select('id').from_('s.orders').where(incremental_by_ds(evaluator, exp.column('event_date')))\n"
    )
    return root


def test_time_locals_are_rendered_for_each_interval(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path), use_cache=False)
    model = project.models["s.waiters"]
    assert model.depends_on == frozenset({"s.orders"})

    def rendered(day: int) -> str:
        start = datetime(2024, 1, day)
        return render_query(model, start=start, end=datetime(2024, 1, day + 1), execution_time=start,
                            table_for=lambda name: name, models=project.models)

    assert "BETWEEN CAST('2024-01-03' AS DATE) AND CAST('2024-01-03' AS DATE)" in rendered(3)
    assert "BETWEEN CAST('2024-01-05' AS DATE) AND CAST('2024-01-05' AS DATE)" in rendered(5)
