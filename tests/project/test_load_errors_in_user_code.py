"""Issue 32: mistakes in templates, macros and seeds are load-time errors at their file and line, never a later
Spark failure or a silently different query, and never a line of a file outside the project."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.loader import load_project

HEADER = "MODEL (name s.m, kind FULL);\n\n"
NOTHING = "from sqlmesh import macro\n\n\n@macro()\ndef nothing(evaluator):\n    return None\n"


def _load(folder: Path, files: dict[str, str]):
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    return load_project(folder, use_cache=False)


@pytest.mark.parametrize(
    ("files", "message", "line"),
    [
        ({"models/m.sql": HEADER + "SELECT 1 AS a,\n  {{ 1/0 }} AS b\n"},
         "Jinja: rendering raised ZeroDivisionError: division by zero", 4),
        ({"models/m.sql": HEADER + "SELECT 1 AS a,\n  {{ var('missing') }} AS b\n"},
         "Jinja: variable 'missing' is not defined", 4),
        ({"models/m.sql": HEADER + "SELECT 1 AS a,\n  @nothing() AS b\n", "macros/m.py": NOTHING},
         "macro @nothing returned None where the SQL needs a value", 4),
    ],
    ids=["jinja_division", "jinja_missing_variable", "macro_none_in_projection"],
)
def test_a_mistake_is_an_error_at_its_line(tmp_path, files, message, line):
    with pytest.raises(ProjectError) as raised:
        _load(tmp_path / "p", files)
    assert raised.value.message.startswith(message) and raised.value.line == line
    assert raised.value.path.name == "m.sql"


def test_none_still_removes_a_list_item_and_an_unset_variable_can_be_tested(tmp_path):
    project = _load(tmp_path / "p", {
        "models/m.sql": HEADER + "SELECT {% if var('missing') %}1{% else %}2{% endif %} AS a, @nothing() FROM (SELECT 1 AS x) AS t\n",
        "macros/m.py": NOTHING,
    })
    assert project.models["s.m"].query == "SELECT 2 AS a FROM (SELECT 1 AS x) AS t"


def test_a_seed_outside_the_project_is_never_echoed(tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("name\nalice,TOKEN-123,x\n")
    with pytest.raises(ProjectError) as raised:
        _load(tmp_path / "p", {"models/m.sql": f"MODEL (name s.seeded, kind SEED (path '{secret}'));\n"})
    text = str(raised.value)
    assert "outside the project" in text and "TOKEN-123" not in text and "alice" not in text
