"""Issue 31, item 2: a plan's diff shows the SQL as the user wrote it (their casing, layout and comments), not
sqlglot's normalized form; versions stored before the text was kept are diffed in the normalized form."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.plan.diffs import definition_diff
from dagster_sparkmesh.project.loader import load_project

BEFORE = """MODEL (name shop.revenue, kind FULL);

-- revenue excludes returns
select ds,
       sum(case when status <> 'returned' then amount else 0 end) as revenue
from raw.orders
group by ds
"""


def _model(folder: Path, text: str):
    (folder / "models").mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (folder / "external_models.yaml").write_text("- name: raw.orders\n  columns: {ds: date, status: string, amount: int}\n")
    (folder / "models" / "revenue.sql").write_text(text)
    return load_project(folder, use_cache=False).models["shop.revenue"]


def test_the_diff_shows_the_sql_as_written(tmp_path):
    old = _model(tmp_path / "a", BEFORE)
    new = _model(tmp_path / "b", BEFORE.replace("status <> 'returned'", "status not in ('returned', 'placed')"))
    diff = definition_diff(old, new).splitlines()
    assert "-       sum(case when status <> 'returned' then amount else 0 end) as revenue" in diff
    assert "+       sum(case when status not in ('returned', 'placed') then amount else 0 end) as revenue" in diff
    assert " -- revenue excludes returns" in diff  # unchanged context, comment kept


def test_a_version_stored_without_its_text_is_diffed_in_the_normalized_form(tmp_path):
    old = _model(tmp_path / "a", BEFORE).model_copy(update={"sql_code": None})
    new = _model(tmp_path / "b", BEFORE.replace("<> 'returned'", "<> 'refunded'"))
    diff = definition_diff(old, new)
    assert "+  SUM(CASE WHEN status <> 'refunded' THEN amount ELSE 0 END) AS revenue" in diff.splitlines()
