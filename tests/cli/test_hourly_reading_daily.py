"""Issue 32, item 5: an hourly model reading a daily one asks only for the hours whose day its parent can have by
then, so the plan applies and promotes at any time of day (and the later hours come once the day is due)."""

from __future__ import annotations

import textwrap
from pathlib import Path


from tests.cli.sparkmesh_harness import invoke


DAILY = """
MODEL (name db.src_d, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), start '2024-01-01', cron '@daily');

SELECT ds, dayofmonth(ds) * 100 AS base
FROM (SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-10', INTERVAL 1 DAY)) AS ds)
WHERE ds BETWEEN @start_ds AND @end_ds
"""

HOURLY = """
MODEL (name db.h, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), start '2024-01-01', cron '@hourly');

SELECT t.ts, hour(t.ts) + d.base AS value
FROM (SELECT explode(sequence(TIMESTAMP'2024-01-01 00:00:00', TIMESTAMP'2024-01-10 00:00:00', INTERVAL 1 HOUR)) AS ts) AS t
LEFT JOIN db.src_d AS d ON d.ds = CAST(t.ts AS DATE)
WHERE t.ts BETWEEN @start_ts AND @end_ts
"""


def _project(folder: Path) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (folder / "models" / "src_d.sql").write_text(textwrap.dedent(DAILY))
    (folder / "models" / "h.sql").write_text(textwrap.dedent(HOURLY))
    return folder


def _plan(project: Path, engine, at: str):
    result, _ = invoke(project, ["plan", "prod", "--auto-apply", "--no-prompts", "--execution-time", at], engine)
    return result


def test_an_hourly_model_reading_a_daily_one_is_promoted_at_any_hour(tmp_path, spark, engine, clean_catalog):
    project = _project(tmp_path / "p")
    morning = _plan(project, engine, "2024-01-03 05:30")
    assert morning.exit_code == 0, morning.output
    last, nulls, count = spark.sql("SELECT MAX(ts), COUNT_IF(value IS NULL), COUNT(*) FROM db.h").collect()[0]
    assert str(last) == "2024-01-02 23:00:00" and nulls == 0 and count == 48  # not today's hours: no day to read

    again = _plan(project, engine, "2024-01-03 06:30")  # an hour later: still nothing the parent can serve
    assert again.exit_code == 0, again.output
    assert spark.sql("SELECT COUNT(*) FROM db.h").collect()[0][0] == 48

    next_day = _plan(project, engine, "2024-01-04 00:30")
    assert next_day.exit_code == 0, next_day.output
    last, nulls, count = spark.sql("SELECT MAX(ts), COUNT_IF(value IS NULL), COUNT(*) FROM db.h").collect()[0]
    assert str(last) == "2024-01-03 23:00:00" and nulls == 0 and count == 72
    assert spark.sql("SELECT value FROM db.h WHERE ts = TIMESTAMP'2024-01-03 05:00:00'").collect()[0][0] == 305
