"""The line `sparkmesh run` ends with: incremental models' intervals apart from models rebuilt whole or kept."""

from __future__ import annotations

from datetime import datetime, timedelta

from dagster_sparkmesh.cli.plan_view import run_summary
from dagster_sparkmesh.execution.results import ModelRunResult
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.records import Interval

DAYS = [Interval(start=datetime(2024, 1, d), end=datetime(2024, 1, d) + timedelta(days=1)) for d in range(1, 31)]


def _project(folder):
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  cron: '@daily'\n")
    (folder / "models" / "full.sql").write_text("MODEL (name s.full, kind FULL);\nSELECT 1 AS x")
    (folder / "models" / "kept.sql").write_text("MODEL (name s.kept, kind FULL);\nSELECT 2 AS x")
    (folder / "models" / "view.sql").write_text("MODEL (name s.v, kind VIEW);\nSELECT x FROM s.full")
    (folder / "models" / "daily.sql").write_text(
        "MODEL (name s.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));\n"
        "SELECT DATE'2024-01-01' AS ds WHERE ds BETWEEN @start_ds AND @end_ds"
    )
    return load_project(folder, use_cache=False)


def _ran(model: str, intervals, rows: int = 0, kept: bool = False) -> ModelRunResult:
    return ModelRunResult(model=model, version="v", physical_table=None, intervals=tuple(intervals),
                          rows_written=rows, kept=kept)


def test_a_new_day_counts_one_interval_per_incremental_model_and_full_and_view_models_apart(tmp_path):
    project = _project(tmp_path)
    computed = [
        _ran("s.daily", DAYS[-1:], rows=5),
        _ran("s.full", DAYS, rows=1),
        _ran("s.v", DAYS),
        _ran("s.kept", DAYS, kept=True),
    ]
    assert run_summary(computed, project.models, 2.345) == (
        "Ran 4 model(s): 1 interval(s) of 1 incremental model(s), 1 rebuilt whole, 1 view(s), "
        "1 FULL table(s) kept, their query and inputs unchanged; 6 rows written in 2.3 s"
    )


def test_a_run_of_one_incremental_model_says_its_intervals_and_nothing_else(tmp_path):
    project = _project(tmp_path)
    assert run_summary([_ran("s.daily", DAYS[:3], rows=9)], project.models, 0.04) == (
        "Ran 1 model(s): 3 interval(s) of 1 incremental model(s); 9 rows written in 0.0 s"
    )


def test_a_run_whose_models_were_all_done_meanwhile_says_so(tmp_path):
    assert run_summary([], _project(tmp_path).models, 0.0) == "Ran 0 model(s): nothing computed; 0 rows written in 0.0 s"
